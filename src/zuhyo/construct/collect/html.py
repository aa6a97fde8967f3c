"""``zuhyo collect html``: the figures of white papers' HTML editions, into a workspace (HakushoBench §3.1).

HakushoBench §3.1 builds its pool from the images of the HTML editions of 33 white-paper series, the latest
edition of each. For every start URL (a table of contents or a figure list) this collector

- finds the URL's edition (:mod:`zuhyo.construct.collect.editions`) and, with ``latest_edition``, leaves out an
  edition when a later edition of its series is asked for too or is already in the workspace;
- crawls the edition with :func:`~zuhyo.construct.collect.crawl.crawl_edition` (in scope only, robots.txt obeyed,
  through the polite fetcher: per-host limit and delay, retries honouring ``Retry-After``) and records each page
  read as a document of the edition's source;
- downloads every figure's ``<img>`` through the same fetcher: only from the edition's host (anything else is
  outside the crawl scope and never requested) and where robots.txt allows; verifies it
  (:func:`~zuhyo.images.verify.verify_image`: not an image, corrupt or huge → a per-item error with the reason),
  stores it in the workspace's image store and records it as a figure with caption, figure number, headings,
  citing paragraphs, back data, edition year and the page URL, everything else in its provenance.

Each figure is committed on its own, so a ``kill -9`` loses at most the figures in hand; a re-run skips the
figures already recorded (by page and image URL) without downloading their images again, and retries the ones
that failed. A page whose figures were all recorded is marked complete with its links: a re-run does not fetch
it again but follows the stored links. Pages with a failed figure, and figure-list pages (their back-data links
go to figures on other pages), are read again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.collect.crawl import DEFAULT_MAX_CRAWL_DELAY_S, USER_AGENT, CrawlReport, PageRead, crawl_edition
from zuhyo.construct.collect.editions import Edition, edition_of, latest_editions
from zuhyo.construct.collect.html_figures import ExtractedFigure
from zuhyo.construct.collect.profiles import SiteProfile, load_profile, profile_for_url
from zuhyo.construct.collect.report import CollectCounts
from zuhyo.construct.collect.robots import RobotsRules
from zuhyo.construct.collect.series import WhitePaperSeries
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.records import (
    add_figure,
    find_figure_row,
    get_or_create_document,
    get_or_create_source,
    record_error,
    resolve_error,
)
from zuhyo.construct.workspace.tables import Document, FigureRow, Source
from zuhyo.errors import DataError, ImageError
from zuhyo.images.fetch import AddressClassifier, PageFetchError, PoliteFetcher, check_url, is_public_address
from zuhyo.images.verify import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS, ImageInfo, verify_image
from zuhyo.schema import Figure

STAGE = "collect"
KIND = "html"
_MAX_EDITION_CHARS = 200


class HtmlItemFailure(BaseModel):
    """A page or image that could not be collected."""

    url: str
    reason: str
    page_url: str | None = None
    """The page an image stands on (None for a page)."""


class LeftOutEdition(BaseModel):
    scope: str
    reason: str


class HtmlCollectReport(CollectCounts):
    """What one ``collect html`` run did (counts are for this run); documents are pages, errors are pages and
    images; ``skipped_existing`` figures' images are not downloaded again."""

    pages: int = 0
    """Pages read."""
    pages_known: int = 0
    """Pages an earlier run read completely: not fetched again, their stored links followed."""
    images_fetched: int = 0
    """Images downloaded (an image shown on several pages once)."""
    skipped_images: int = 0
    """``<img>`` left out as decorations (icons, logos) or without a usable URL."""
    robots_blocked: int = 0
    """In-scope pages and images robots.txt does not allow (never requested)."""
    editions: list[str] = Field(default_factory=list)
    """The scopes crawled."""
    left_out_editions: list[LeftOutEdition] = Field(default_factory=list)
    """Editions not crawled because a later edition of their series is asked for or collected (--latest-edition)."""
    unreachable: list[HtmlItemFailure] = Field(default_factory=list)
    """Start URLs of which not one page could be read."""
    crawl_delays_capped: list[str] = Field(default_factory=list)
    """Hosts whose robots.txt ``Crawl-delay`` was over ``max_crawl_delay_s``: what they asked, what was waited."""
    error_items: list[HtmlItemFailure] = Field(default_factory=list)


class _Edition:
    """One edition being collected: its source row, what is already recorded, and the run's bookkeeping."""

    def __init__(self, ws: Workspace, edition: Edition, profile: SiteProfile, run_id: int,
                 report: HtmlCollectReport, series: WhitePaperSeries | None = None) -> None:
        self.ws, self.edition, self.profile, self.run_id, self.report = ws, edition, profile, run_id, report
        self.series_meta = series.source_meta() if series is not None else {}
        """The white paper and topic of a listed series (``--series``), recorded on the source and each figure."""
        meta = {"profile": profile.name, "series": edition.series, "edition_year": edition.year,
                "edition": edition.label, **self.series_meta}

        def source(s: Session) -> int:
            row = get_or_create_source(s, KIND, edition.scope, meta=meta)
            if self.series_meta and any((row.meta or {}).get(k) != v for k, v in self.series_meta.items()):
                row.meta = {**(row.meta or {}), **self.series_meta}  # collected before without its series
            return row.id

        self.source_id: int = ws.db.write_retrying(source)
        with ws.db.read() as s:
            self.existing = {(page, img) for page, img in s.execute(
                select(Document.locator, FigureRow.locator).join(FigureRow, FigureRow.document_id == Document.id)
                .where(Document.source_id == self.source_id))}
            self.done_pages: dict[str, list[str]] = {
                loc: list(meta.get("links", [])) for loc, meta in s.execute(
                    select(Document.locator, Document.meta).where(Document.source_id == self.source_id))
                if isinstance(meta, dict) and meta.get("complete")}
            """Pages an earlier run read completely (every figure recorded) → their links."""
        self.pending: dict[str, list[Any]] = {}
        """Page URL → [figures not finished yet, all recorded so far, its links] for the pages read now."""
        self.crawl = CrawlReport()
        self.errors_seen = 0
        self.images: dict[str, tuple[str, ImageInfo, int, str] | str] = {}
        """Image URL → (sha256, info, bytes, final URL) once downloaded in this run, or the reason it failed."""
        self.titles: dict[str, str] = {}
        self.note: Callable[[str, str], None] = lambda _url, _outcome: None
        """Progress: ``note(url, outcome)`` per figure and per failed page."""

    def fail(self, key: str, url: str, reason: str, page_url: str | None = None) -> None:
        item_key = f"source/{self.source_id}/{key}"
        self.ws.db.write_retrying(lambda s: record_error(s, STAGE, item_key, url, reason, source_id=self.source_id,
                                                         run_id=self.run_id))
        self.report.errors += 1
        self.report.error_items.append(HtmlItemFailure(url=url, reason=reason, page_url=page_url))

    def flush_crawl_errors(self) -> None:
        """Record the page errors the crawl has reported since the last call."""
        for e in self.crawl.errors[self.errors_seen:]:
            self.fail(e.url, e.url, f"page {e.url}: {e.message}")
            self.note(e.url, "error")
        self.errors_seen = len(self.crawl.errors)

    def known_links(self, url: str) -> list[str] | None:
        """The links of ``url`` when an earlier run recorded it completely (it is then not fetched again)."""
        links = self.done_pages.get(url)
        if links is not None:
            self.report.skipped_existing += sum(1 for page, _ in self.existing if page == url)
        return links

    def figure_done(self, page_url: str, outcome: str) -> None:
        """Count one figure of ``page_url`` finished; a page whose figures are all recorded is complete."""
        state = self.pending.get(page_url)
        if state is None:
            return
        state[0] -= 1
        state[1] = state[1] and outcome != "error"
        if state[0] <= 0:
            del self.pending[page_url]
            if state[1]:
                self._complete(page_url, state[2])

    def _complete(self, page_url: str, links: list[str]) -> None:
        def write(s: Session) -> None:
            doc = s.scalar(select(Document).where(Document.source_id == self.source_id,
                                                  Document.locator == page_url))
            if doc is not None:
                doc.meta = {**(doc.meta or {}), "links": links, "complete": True}

        self.ws.db.write_retrying(write)

    def on_page(self, read: PageRead) -> None:
        self.flush_crawl_errors()
        page = read.page
        self.titles[page.page_url] = page.title
        year = self.edition.year
        if year is None:
            year = next((f.edition_year for f in page.figures if f.edition_year is not None), None)

        def write(s: Session) -> bool:
            _, created = get_or_create_document(
                s, self.source_id, page.page_url, title=page.title or None, page_url=page.page_url,
                edition=self.edition.label[:_MAX_EDITION_CHARS], year=year,
                meta={"profile": self.profile.name, "skipped_images": [i.model_dump() for i in page.skipped]})
            resolve_error(s, STAGE, f"source/{self.source_id}/{page.page_url}")
            return created

        self.report.documents += int(self.ws.db.write_retrying(write))
        # A figure-list page is always read again: its back-data links go to figures found after it.
        if read.index_entries == 0:
            self.pending[page.page_url] = [len(page.figures), True, read.links]
            if not page.figures:
                self.figure_done(page.page_url, "added")


def _figure(sha: str, info: ImageInfo, size: int, final_url: str, page_url: str, fig: ExtractedFigure,
            edition: Edition, profile: SiteProfile, series_meta: dict[str, object] | None = None) -> Figure:
    provenance: dict[str, Any] = {**(series_meta or {}),
        "collector": KIND, "profile": profile.name, "image_url": fig.image_url, "page_url": page_url,
        "scope": edition.scope, "series": edition.series, "caption_from": fig.caption_from, "label": fig.label,
        "number": fig.figure_number, "title": fig.title, "source_line": fig.source_line, "source": fig.source,
        "headings": fig.headings, "back_data": fig.back_data, "years": fig.years, "alt": fig.alt,
        "edition_year": fig.edition_year, "bytes": size, "format": info.format}
    if final_url != fig.image_url:
        provenance["final_url"] = final_url
    year = edition.year if edition.year is not None else fig.edition_year
    return Figure(sha256=sha, locator=fig.image_url, caption=fig.caption or None, figure_number=fig.label,
                  context=fig.citing_paragraphs, page=urlsplit(page_url).path.rsplit("/", 1)[-1] or None,
                  section=" > ".join(fig.headings) or None, page_url=page_url,
                  back_data_url=fig.back_data[0] if fig.back_data else None,
                  edition=edition.label[:_MAX_EDITION_CHARS], year=year, width=info.width, height=info.height,
                  mime=info.mime, provenance=provenance)


async def _download(ed: _Edition, fetcher: PoliteFetcher, url: str, refuse: Callable[[str], str | None], *,
                    max_bytes: int, max_pixels: int) -> tuple[str, ImageInfo, int, str] | str:
    """Fetch, verify and store one image: (sha256, info, bytes, final URL), or why it failed."""
    try:
        page = await fetcher.get(url, refuse)
    except PageFetchError as e:
        return e.message
    try:
        info = await asyncio.to_thread(verify_image, page.body, max_pixels=max_pixels, max_bytes=max_bytes)
    except ImageError as e:
        served = f" (served as {page.content_type})" if page.content_type else ""
        return f"not a usable image{served}: {e}"
    sha, _ = await asyncio.to_thread(ed.ws.images.put, page.body, info.suffix)
    ed.report.images_fetched += 1
    return sha, info, len(page.body), page.url


async def _collect_figure(ed: _Edition, fetcher: PoliteFetcher, robots: dict[str, RobotsRules], page_url: str,
                          fig: ExtractedFigure, *, max_bytes: int, max_pixels: int) -> str:
    """Download, verify, store and record one figure; its outcome (``added``, ``existing`` or ``error``)."""
    url = fig.image_url
    key = f"{page_url} {url}"
    scope = urlsplit(ed.edition.scope)
    origin = f"{scope.scheme}://{scope.netloc}"

    def refuse(target: str) -> str | None:
        t = urlsplit(target)
        if (t.scheme, t.netloc.lower()) != (scope.scheme, scope.netloc.lower()):
            return f"outside the crawl scope {origin} (not followed)"
        rules = robots.get(origin)
        return None if rules is None or rules.allows(target, USER_AGENT) else "disallowed by robots.txt"

    outside = refuse(url)
    if outside is not None:
        if outside.startswith("disallowed"):
            ed.report.robots_blocked += 1
            return "skipped"
        ed.fail(key, url, f"image {url} on {page_url}: {outside.replace('not followed', 'not fetched')}", page_url)
        return "error"
    got = ed.images.get(url)
    if got is None:
        got = await _download(ed, fetcher, url, refuse, max_bytes=max_bytes, max_pixels=max_pixels)
        ed.images[url] = got
    if isinstance(got, str):
        ed.fail(key, url, f"image {url} on {page_url}: {got}", page_url)
        return "error"
    figure = _figure(*got, page_url, fig, ed.edition, ed.profile, ed.series_meta)

    def insert(s: Session) -> bool:
        doc, _ = get_or_create_document(s, ed.source_id, page_url, page_url=page_url,
                                        title=ed.titles.get(page_url) or None)
        if find_figure_row(s, doc.id, url) is not None:  # another process collected it meanwhile
            return False
        add_figure(s, doc.id, figure, ed.run_id)
        resolve_error(s, STAGE, f"source/{ed.source_id}/{key}")
        return True

    if not ed.ws.db.write_retrying(insert):
        ed.report.skipped_existing += 1
        return "existing"
    ed.existing.add((page_url, url))
    ed.report.figures += 1
    return "added"


def _known_editions(ws: Workspace) -> list[Edition]:
    with ws.db.read() as s:
        rows = s.scalars(select(Source).where(Source.kind == KIND)).all()
    return [Edition(scope=r.locator, series=r.meta["series"], year=r.meta.get("edition_year"),
                    label=r.meta.get("edition") or r.locator)
            for r in rows if isinstance(r.meta, dict) and r.meta.get("series")]


async def acollect_html(ws: Workspace, urls: Sequence[str], *, profile: str | None = None,
                        latest_edition: bool = False, series: Sequence[WhitePaperSeries] = (),
                        max_pages: int = 5000, delay_s: float = 0.5,
                        per_host: int = 2, retries: int = 3, timeout_s: float = 30.0,
                        max_bytes: int = DEFAULT_MAX_BYTES, max_pixels: int = DEFAULT_MAX_PIXELS,
                        max_crawl_delay_s: float = DEFAULT_MAX_CRAWL_DELAY_S,
                        is_public: AddressClassifier = is_public_address,
                        on_item: Callable[[str, str], None] | None = None) -> HtmlCollectReport:
    """Collect the figures of the editions ``urls`` start; see the module docstring.

    ``profile`` names a site profile (or a ``.toml`` path); without it each URL's host picks a bundled profile,
    else the generic one. ``on_item(image_url, outcome)`` follows progress (``added``, ``existing``, ``error``,
    ``skipped``). ``series`` (:mod:`zuhyo.construct.collect.series`) adds each listed series' start URL, turns
    ``latest_edition`` on (HakushoBench §3.1) and records the series' white paper, topic group and publisher on its
    edition's source and figures. Raises :class:`DataError` for a malformed start URL and
    :class:`~zuhyo.construct.collect.profiles.ProfileError` for an unknown profile (nothing is recorded then).
    """
    urls = [*urls, *(row.start_url for row in series if row.start_url not in urls)]
    latest_edition = latest_edition or bool(series)
    listed = {row.start_url: row for row in series}
    for url in urls:
        bad = check_url(url)
        if bad is not None:
            raise DataError(f"start URL {url!r}{f' (series {listed[url].title_ja})' if url in listed else ''}: "
                            f"{bad}")
    named = load_profile(profile) if profile is not None else None
    groups: dict[str, tuple[Edition, SiteProfile, list[str]]] = {}
    series_of: dict[str, WhitePaperSeries] = {}
    for url in urls:
        prof = named or profile_for_url(url)
        ed = edition_of(url, prof)
        groups.setdefault(ed.scope, (ed, prof, []))[2].append(url)
        if url in listed:
            series_of.setdefault(ed.scope, listed[url])
    report = HtmlCollectReport()
    editions = [ed for ed, _, _ in groups.values()]
    if latest_edition:
        editions, left = latest_editions(editions, _known_editions(ws))
        report.left_out_editions = [LeftOutEdition(scope=e.scope, reason=why) for e, why in left]
    params = {"collector": KIND, "urls": list(urls), "profile": profile, "latest_edition": latest_edition,
              "series": [row.title_ja for row in series],
              "max_pages": max_pages, "delay_s": delay_s, "per_host": per_host, "max_crawl_delay_s": max_crawl_delay_s}

    def note(url: str, outcome: str) -> None:
        if on_item is not None:
            on_item(url, outcome)

    with ws.run(STAGE, params) as run:
        async with PoliteFetcher(per_host=per_host, concurrency=max(4, per_host), delay_s=delay_s, retries=retries,
                                 timeout_s=timeout_s, max_bytes=max_bytes, is_public=is_public) as fetcher:
            robots: dict[str, RobotsRules] = {}  # each host's robots.txt asked once per run
            for edition in editions:
                _, prof, starts = groups[edition.scope]
                report.editions.append(edition.scope)
                await _collect_edition(_Edition(ws, edition, prof, run.id, report, series_of.get(edition.scope)),
                                       fetcher, robots, starts,
                                       max_pages, max_bytes, max_pixels, note, max_crawl_delay_s)
        run.counts = report.model_dump(include={"figures", "documents", "errors", "pages", "images_fetched",
                                                "skipped_existing", "robots_blocked"})
    return report


async def _collect_edition(ed: _Edition, fetcher: PoliteFetcher, robots: dict[str, RobotsRules], starts: list[str],
                           max_pages: int, max_bytes: int, max_pixels: int, note: Callable[[str, str], None],
                           max_crawl_delay_s: float = DEFAULT_MAX_CRAWL_DELAY_S) -> None:
    ed.note = note
    tasks: set[asyncio.Task[None]] = set()
    gate = asyncio.Semaphore(8)  # figures in hand at once; the fetcher's per-host limit paces the requests

    async def one(page_url: str, fig: ExtractedFigure) -> None:
        async with gate:
            outcome = await _collect_figure(ed, fetcher, robots, page_url, fig, max_bytes=max_bytes,
                                            max_pixels=max_pixels)
        ed.figure_done(page_url, outcome)
        note(fig.image_url, outcome)

    async for page_url, fig in crawl_edition(starts, ed.profile, scope=ed.edition.scope, report=ed.crawl,
                                             fetcher=fetcher, max_pages=max_pages, on_page=ed.on_page,
                                             robots=robots, known_links=ed.known_links,
                                             max_crawl_delay_s=max_crawl_delay_s):
        ed.flush_crawl_errors()
        if (page_url, fig.image_url) in ed.existing:
            ed.report.skipped_existing += 1
            ed.figure_done(page_url, "existing")
            note(fig.image_url, "existing")
            continue
        ed.existing.add((page_url, fig.image_url))  # the same image twice on one page is one figure
        await gate.acquire()  # do not run ahead of the downloads
        gate.release()
        task = asyncio.create_task(one(page_url, fig))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.gather(*tasks)
    ed.flush_crawl_errors()
    for e in ed.crawl.robots_errors:
        ed.fail(e.url, e.url, f"robots.txt could not be read ({e.message}); the host counts as disallowing "
                              "everything (RFC 9309)")
    ed.report.pages += ed.crawl.pages
    ed.report.skipped_images += ed.crawl.skipped_images
    ed.report.robots_blocked += len(ed.crawl.robots_blocked)
    ed.report.pages_known += ed.crawl.pages_known
    ed.report.crawl_delays_capped += [n for n in ed.crawl.crawl_delays_capped if n not in ed.report.crawl_delays_capped]
    if ed.crawl.pages == 0 and ed.crawl.pages_known == 0:
        ed.report.unreachable.append(HtmlItemFailure(url=starts[0], reason=_unreachable_reason(ed.crawl)))


def _unreachable_reason(crawl: CrawlReport) -> str:
    if crawl.robots_errors:
        first = crawl.robots_errors[0]
        return f"cannot read {first.url}: {first.message}"
    if crawl.errors:
        return crawl.errors[0].message
    if crawl.robots_blocked:
        return "robots.txt disallows it"
    return "no page could be read"


def collect_html(ws: Workspace, urls: Sequence[str], **options: Any) -> HtmlCollectReport:
    """Blocking wrapper of :func:`acollect_html` (same keyword options)."""
    return asyncio.run(acollect_html(ws, urls, **options))


__all__ = ["HtmlCollectReport", "HtmlItemFailure", "acollect_html", "collect_html"]
