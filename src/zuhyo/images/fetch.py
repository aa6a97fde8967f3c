"""Materialising URL-only images: polite, bounded, resumable, verified downloads into an :class:`ImageStore`.

Each distinct URL is downloaded once (several items may share an image), with

- at most ``concurrency`` requests in flight overall and ``per_host`` per host, and request starts to one host
  spaced at least ``delay_s`` apart (politeness towards the publishers' web servers);
- retries with exponential backoff and jitter on 429, 5xx, timeouts and connection errors, honouring
  ``Retry-After``; no retry on other 4xx (404 and 403 will not change by asking again);
- redirects followed by hand (so each hop obeys the per-host limits and must stay http/https), loops detected;
- a redirect to a private, loopback or link-local address refused (server-side request forgery: a public server
  must not steer zuhyo at the user's own network or a cloud metadata endpoint) unless it is the machine the URL
  itself named, or ``allow_private_hosts`` is set; URLs the user names are taken as given. The address checked is
  the one connected to (:mod:`zuhyo.images.addresses`: the client's resolver drops what it may not reach), and
  IPv6 forms of IPv4 addresses (NAT64, 6to4, mapped) are judged by their IPv4 address;
- bodies streamed with a byte cap (a huge body is aborted, not buffered);
- every body verified to decode (:func:`~zuhyo.images.verify.verify_image`) before it is stored.

Each outcome is appended to the store's URL index, so a re-run skips URLs already fetched whose file is present
and still hashes to the recorded SHA-256, and retries the ones that failed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import time
from collections.abc import Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, Field

from zuhyo.errors import ImageError
from zuhyo.images.addresses import (
    AddressClassifier,
    GuardedResolver,
    IPAddress,
    PrivateAddressError,
    address_kind,
    is_public_address,
)
from zuhyo.images.store import ImageStore
from zuhyo.images.verify import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS, verify_image

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import aiohttp

USER_AGENT = "zuhyo-image-fetch/0.1 (+https://github.com/zuhyo; research benchmark materialisation)"
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024
_MAX_BACKOFF_S = 60.0


class FetchItemError(BaseModel):
    """One item whose image could not be materialised."""

    item_id: str
    url: str
    message: str

    def __str__(self) -> str:
        return f"{self.item_id} <{self.url}>: {self.message}"


class FetchReport(BaseModel):
    """What a fetch did. Counts are per item; a URL shared by several items is downloaded once."""

    items: int = 0
    """Items asked for."""
    urls: int = 0
    """Distinct valid URLs among them."""
    fetched: int = 0
    """Items whose image was downloaded, verified and stored by this run."""
    skipped: int = 0
    """Items whose image was already in the store (recorded in the index, file present, hash matches)."""
    failed: int = 0
    """Items whose image could not be materialised (bad URL, HTTP error, not an image, too large ...)."""
    bytes: int = 0
    """Bytes downloaded and stored by this run."""
    errors: list[FetchItemError] = Field(default_factory=list)
    """One entry per failed item, in input order."""

    def summary(self) -> str:
        """One human line."""
        return (f"{self.fetched} fetched, {self.skipped} already present, {self.failed} failed "
                f"(of {self.items} items, {self.urls} distinct URLs; {self.bytes:,} bytes downloaded)")


@dataclass(frozen=True)
class FetchEvent:
    """Progress notification: one URL finished (or was skipped / rejected)."""

    url: str
    item_ids: tuple[str, ...]
    outcome: Literal["fetched", "skipped", "failed"]
    bytes: int = 0
    message: str | None = None


ProgressCallback = Callable[[FetchEvent], None]


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Permanent(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def check_url(url: object) -> str | None:
    """Why ``url`` cannot be fetched (only absolute http/https URLs can), or None when it is fine."""
    if not isinstance(url, str) or not url.strip():
        return "empty URL"
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        if not parts.scheme:
            return "not an absolute URL (expected http:// or https://)"
        return f"unsupported URL scheme {parts.scheme!r} (only http and https)"
    if not parts.hostname:
        return "URL has no host"
    try:
        parts.port  # noqa: B018 - raises ValueError for an out-of-range or non-numeric port
    except ValueError as e:
        return f"bad port in URL: {e}"
    return None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent/invalid."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay(attempt: int, base_s: float) -> float:
    """Exponential backoff with full jitter on top: ``base·2^attempt·(1 + U[0,1))``, capped at 60 s."""
    return min(_MAX_BACKOFF_S, base_s * (2 ** attempt) * (1.0 + random.random()))


class _HostGate:
    """Per-host politeness: at most ``per_host`` requests in flight, starts spaced at least ``delay_s`` apart."""

    def __init__(self, per_host: int, delay_s: float) -> None:
        self._sem = asyncio.Semaphore(per_host)
        self._delay_s = delay_s
        self._next_start = 0.0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._sem:
            loop = asyncio.get_running_loop()
            now = loop.time()
            # Reserve a start time; no await between reading and writing, so no lock is needed.
            start = max(now, self._next_start)
            self._next_start = start + self._delay_s
            if start > now:
                await asyncio.sleep(start - now)
            yield


@dataclass
class _Settings:
    concurrency: int
    per_host: int
    delay_s: float
    retries: int
    timeout_s: float
    max_bytes: int
    max_pixels: int
    max_redirects: int
    backoff_s: float
    max_retry_after_s: float
    allow_private_hosts: bool = False
    is_public: AddressClassifier = is_public_address


class _Downloader:
    """Downloads one URL under the politeness limits, with retries and manual redirects."""

    def __init__(self, session: aiohttp.ClientSession, settings: _Settings, resolver: GuardedResolver) -> None:
        self.session = session
        self.s = settings
        self.resolver = resolver
        self._global = asyncio.Semaphore(settings.concurrency)
        self._gates: dict[str, _HostGate] = {}

    def _gate(self, url: str) -> _HostGate:
        host = (urlsplit(url).hostname or "").lower()
        if host not in self._gates:
            self._gates[host] = _HostGate(self.s.per_host, self.s.delay_s)
        return self._gates[host]

    async def download(self, url: str, redirect_check: Callable[[str], str | None] | None = None
                       ) -> tuple[bytes, str, str | None]:
        """(body, final URL, Content-Type); raises _Permanent with the reason after the last retry.
        ``redirect_check(url)`` may refuse a redirect target (returns why) before it is requested."""
        with self.resolver.chain(urlsplit(url).hostname or "") as mine:  # the user's URL: its host as given
            return await self._download(url, redirect_check, mine)

    async def _download(self, url: str, redirect_check: Callable[[str], str | None] | None,
                        mine: set[IPAddress]) -> tuple[bytes, str, str | None]:
        attempt = 0
        while True:
            try:
                return await self._attempt(url, redirect_check, mine)
            except _Retryable as e:
                if attempt >= self.s.retries:
                    tries = f"{attempt + 1} attempt" + ("s" if attempt else "")
                    raise _Permanent(f"{e} (gave up after {tries})") from None
                wait = e.retry_after if e.retry_after is not None else backoff_delay(attempt, self.s.backoff_s)
                attempt += 1
                await asyncio.sleep(min(wait, self.s.max_retry_after_s))

    async def _attempt(self, url: str, redirect_check: Callable[[str], str | None] | None,
                       mine: set[IPAddress]) -> tuple[bytes, str, str | None]:
        import aiohttp

        chain = [url]
        current = url
        for _hop in range(self.s.max_redirects + 1):
            try:
                async with self._gate(current).slot(), self._global:
                    async with self.session.get(current, allow_redirects=False) as resp:
                        if resp.status in _REDIRECT_STATUSES:
                            current = self._next_hop(current, resp.headers.get("Location"), chain, resp.status)
                            refused = redirect_check(current) if redirect_check is not None else None
                            if refused:
                                raise _Permanent(f"redirected to {current}: {refused}", resp.status)
                            self._check_target(current, mine)
                            continue
                        return await self._body(resp), current, resp.headers.get("Content-Type")
            except TimeoutError:
                raise _Retryable(f"timed out after {self.s.timeout_s:g} s") from None
            except aiohttp.ClientConnectorError as e:
                if isinstance(e.os_error, PrivateAddressError):  # the resolver refused where it leads
                    raise _Permanent(f"redirect to {current} refused: {e.os_error}") from None
                raise _Retryable(f"connection error: {type(e).__name__}: {e}") from None
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
                raise _Retryable(f"connection error: {type(e).__name__}: {e}") from None
            except aiohttp.ClientError as e:
                raise _Permanent(f"{type(e).__name__}: {e}") from None
        raise _Permanent(f"too many redirects (more than {self.s.max_redirects}): {' -> '.join(chain)}")

    def _check_target(self, target: str, mine: set[IPAddress]) -> None:
        """Refuse (before requesting it) a redirect ``target`` at a non-public address literal, unless it is an
        address of the host the URL names (``mine``, pinned by the resolver), or private hosts are allowed. A target
        named by a host name is checked where it is connected to (:class:`~zuhyo.images.addresses.GuardedResolver`)."""
        host = (urlsplit(target).hostname or "").strip("[]")
        try:
            ip = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return
        if self.s.allow_private_hosts or self.s.is_public(ip) or ip in mine:
            return
        raise _Permanent(f"redirect to {target} refused: {host} is a {address_kind(ip)} address "
                         f"(pass --allow-private-hosts to follow redirects into private networks)")

    @staticmethod
    def _next_hop(current: str, location: str | None, chain: list[str], status: int) -> str:
        if not location:
            raise _Permanent(f"HTTP {status} redirect without a Location header")
        nxt = urljoin(current, location)
        bad = check_url(nxt)
        if bad is not None:
            raise _Permanent(f"redirected to {nxt}: {bad}")
        if nxt in chain:
            raise _Permanent(f"redirect loop: {' -> '.join([*chain, nxt])}")
        chain.append(nxt)
        return nxt

    async def _body(self, resp: aiohttp.ClientResponse) -> bytes:
        status = f"HTTP {resp.status} {resp.reason or ''}".rstrip()
        if resp.status == 429 or resp.status >= 500:
            raise _Retryable(status, parse_retry_after(resp.headers.get("Retry-After")))
        if not 200 <= resp.status < 300:
            raise _Permanent(status, resp.status)
        cap = self.s.max_bytes
        if resp.content_length is not None and resp.content_length > cap:
            resp.close()
            raise _Permanent(f"body too large: Content-Length {resp.content_length:,} bytes > limit {cap:,}")
        body = bytearray()
        async for chunk in resp.content.iter_chunked(_CHUNK):
            body += chunk
            if len(body) > cap:
                resp.close()  # drop the connection rather than drain a huge body
                raise _Permanent(f"body too large: over the {cap:,}-byte limit (download aborted)")
        return bytes(body)


def _already_fetched(store: ImageStore, url: str) -> bool:
    rec = store.index.get(url)
    return rec is not None and rec.status == "ok" and rec.sha256 is not None and store.verify(rec.sha256)


async def afetch_images(
    urls: Sequence[tuple[str, str]], store: ImageStore, *, concurrency: int = 16, per_host: int = 4,
    delay_s: float = 0.2, retries: int = 4, timeout_s: float = 30.0, max_bytes: int = DEFAULT_MAX_BYTES,
    max_pixels: int = DEFAULT_MAX_PIXELS, max_redirects: int = 10, backoff_s: float = 0.5,
    max_retry_after_s: float = 120.0, user_agent: str = USER_AGENT, progress: ProgressCallback | None = None,
    allow_private_hosts: bool = False, is_public: AddressClassifier = is_public_address,
) -> FetchReport:
    """Download the images of ``urls`` (pairs of item id and URL) into ``store``; see the module docstring.

    ``allow_private_hosts`` follows redirects into private, loopback and link-local addresses; ``is_public``
    decides which addresses are public (injectable for tests and special networks).

    Per-item problems never raise: they become :attr:`FetchReport.errors` entries naming the item and URL.
    Store I/O errors (disk full) do raise. ``timeout_s`` bounds each request (one hop of one attempt).
    """
    if concurrency < 1 or per_host < 1:
        raise ValueError("concurrency and per_host must be at least 1")
    if delay_s < 0 or retries < 0 or timeout_s <= 0 or max_bytes <= 0 or max_redirects < 0:
        raise ValueError("delay_s, retries and max_redirects must be >= 0; timeout_s and max_bytes > 0")
    settings = _Settings(concurrency, per_host, delay_s, retries, timeout_s, max_bytes, max_pixels, max_redirects,
                         backoff_s, max_retry_after_s, allow_private_hosts, is_public)
    report = FetchReport(items=len(urls))
    errors: list[tuple[int, FetchItemError]] = []
    position: dict[str, list[tuple[int, str]]] = {}  # url -> [(input position, item id)]

    def notify(event: FetchEvent) -> None:
        if progress is not None:
            progress(event)

    def fail(url: str, entries: list[tuple[int, str]], message: str) -> None:
        report.failed += len(entries)
        errors.extend((i, FetchItemError(item_id=item, url=url, message=message)) for i, item in entries)
        notify(FetchEvent(url, tuple(item for _, item in entries), "failed", message=message))

    for i, (item_id, url) in enumerate(urls):
        bad = check_url(url)
        if bad is not None:
            fail(str(url), [(i, str(item_id))], bad)
        else:
            position.setdefault(url, []).append((i, str(item_id)))
    report.urls = len(position)

    # Resume: hashing stored files is disk-bound, so it runs off the event loop.
    present = await asyncio.to_thread(lambda: {u for u in position if _already_fetched(store, u)})
    for url in position:
        if url in present:
            report.skipped += len(position[url])
            notify(FetchEvent(url, tuple(item for _, item in position[url]), "skipped"))
    todo = [u for u in position if u not in present]
    if todo:
        await _run_downloads(todo, store, settings, user_agent, position, report, fail, notify)
    report.errors = [e for _, e in sorted(errors, key=lambda pair: pair[0])]
    return report


async def _run_downloads(todo: list[str], store: ImageStore, settings: _Settings, user_agent: str,
                         position: dict[str, list[tuple[int, str]]], report: FetchReport,
                         fail: Callable[[str, list[tuple[int, str]], str], None],
                         notify: Callable[[FetchEvent], None]) -> None:
    session, resolver = _client_session(settings, user_agent, "image/*,*/*;q=0.5")
    async with session:
        downloader = _Downloader(session, settings, resolver)

        async def one(url: str) -> None:
            entries = position[url]
            try:
                data, final_url, content_type = await downloader.download(url)
            except _Permanent as e:
                store.index.append(url, "failed", message=str(e), time=time.time())
                fail(url, entries, str(e))
                return
            try:
                info = await asyncio.to_thread(verify_image, data, max_pixels=settings.max_pixels,
                                               max_bytes=settings.max_bytes)
            except ImageError as e:
                served = f" (served as {content_type})" if content_type else ""
                message = f"not a usable image{served}: {e}"
                store.index.append(url, "failed", message=message, time=time.time())
                fail(url, entries, message)
                return
            sha, _path = await asyncio.to_thread(store.put, data, info.suffix)
            extra: dict[str, Any] = {"bytes": len(data), "width": info.width, "height": info.height,
                                     "format": info.format, "mime": info.mime, "time": time.time()}
            if final_url != url:
                extra["final_url"] = final_url
            store.index.append(url, "ok", sha256=sha, **extra)
            report.fetched += len(entries)
            report.bytes += len(data)
            notify(FetchEvent(url, tuple(item for _, item in entries), "fetched", bytes=len(data)))

        await asyncio.gather(*(one(u) for u in todo))


def _client_session(settings: _Settings, user_agent: str, accept: str
                    ) -> tuple[aiohttp.ClientSession, GuardedResolver]:
    import aiohttp

    resolver = GuardedResolver(aiohttp.DefaultResolver(), settings.is_public,
                               allow_private=settings.allow_private_hosts)
    connector = aiohttp.TCPConnector(limit=settings.concurrency, use_dns_cache=False,  # cached by the resolver
                                     resolver=resolver)  # type: ignore[arg-type]  # the AbstractResolver protocol
    timeout = aiohttp.ClientTimeout(total=settings.timeout_s)
    headers = {"User-Agent": user_agent, "Accept": accept}
    return aiohttp.ClientSession(connector=connector, timeout=timeout, headers=headers), resolver


class PageFetchError(Exception):
    """A page that could not be fetched; ``status`` is the final HTTP status when there was one (404 …)."""

    def __init__(self, url: str, message: str, status: int | None = None) -> None:
        super().__init__(f"<{url}>: {message}")
        self.url = url
        self.message = message
        self.status = status


@dataclass(frozen=True)
class FetchedPage:
    body: bytes
    url: str
    """The final URL (after redirects)."""
    content_type: str | None


class PoliteFetcher:
    """The downloader of :func:`afetch_images` for bodies that are not images (HTML pages, robots.txt): the same
    per-host limit and delay, retries with Retry-After, manual redirects, byte cap, and redirects into private
    addresses refused unless ``allow_private_hosts`` (``is_public`` decides, injectable as for
    :func:`afetch_images`). Use as ``async with PoliteFetcher(...) as fetcher: page = await fetcher.get(url)``."""

    def __init__(self, *, concurrency: int = 4, per_host: int = 2, delay_s: float = 0.5, retries: int = 3,
                 timeout_s: float = 30.0, max_bytes: int = 20 * 1024 * 1024, max_redirects: int = 10,
                 backoff_s: float = 0.5, max_retry_after_s: float = 120.0, user_agent: str = USER_AGENT,
                 allow_private_hosts: bool = False, is_public: AddressClassifier = is_public_address) -> None:
        if concurrency < 1 or per_host < 1 or delay_s < 0 or retries < 0 or timeout_s <= 0 or max_bytes <= 0:
            raise ValueError("concurrency and per_host must be >= 1, delay_s and retries >= 0, timeout_s and "
                             "max_bytes > 0")
        self._settings = _Settings(concurrency, per_host, delay_s, retries, timeout_s, max_bytes,
                                   DEFAULT_MAX_PIXELS, max_redirects, backoff_s, max_retry_after_s,
                                   allow_private_hosts, is_public)
        self.user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None
        self._downloader: _Downloader | None = None

    async def __aenter__(self) -> PoliteFetcher:
        self._session, resolver = _client_session(self._settings, self.user_agent, "text/html,*/*;q=0.5")
        self._downloader = _Downloader(self._session, self._settings, resolver)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = self._downloader = None

    async def get(self, url: str, redirect_check: Callable[[str], str | None] | None = None) -> FetchedPage:
        """The body of ``url``; raises :class:`PageFetchError` after the last retry or on a 4xx, or when
        ``redirect_check(target)`` gives a reason not to follow a redirect (the target is then not requested)."""
        if self._downloader is None:
            raise RuntimeError("PoliteFetcher.get() outside `async with PoliteFetcher(...)`")
        bad = check_url(url)
        if bad is not None:
            raise PageFetchError(url, bad)
        try:
            body, final_url, content_type = await self._downloader.download(url, redirect_check)
        except _Permanent as e:
            raise PageFetchError(url, str(e), e.status) from None
        return FetchedPage(body, final_url, content_type)


def fetch_images(urls: Sequence[tuple[str, str]], store: ImageStore, **options: Any) -> FetchReport:
    """Blocking wrapper of :func:`afetch_images` (same keyword options); not for use inside a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(afetch_images(urls, store, **options))
    raise RuntimeError("fetch_images() was called inside a running event loop; use `await afetch_images(...)`")


_STORES: dict[Path, ImageStore] = {}


def cached_path_for_url(cache_dir: Path | str, url: str) -> Path | None:
    """The stored file for ``url`` in the store at ``cache_dir``, or None when it was not fetched (or is gone).

    The index is read once per process and re-read only when it changes, so calling this per sample is cheap.
    """
    root = Path(cache_dir).resolve()
    if not (root / "index.jsonl").is_file():
        return None
    store = _STORES.get(root)
    if store is None:
        store = _STORES[root] = ImageStore(root)
    rec = store.index.get(url)
    if rec is None or rec.status != "ok" or rec.sha256 is None:
        return None
    return store.path_for(rec.sha256)
