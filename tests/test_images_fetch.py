"""`zuhyo images fetch` and `fetch_images` against a real aiohttp server on 127.0.0.1 (random port).

The server serves the suite's rendered charts (tests/fixtures/chartqa/test/png) as PNG and JPEG, and every
failure mode the fetcher must survive: truncated PNG, HTML page, decompression bomb, over-size bodies (declared
and streamed), a slow endpoint, 404, 403, a 503 that recovers after Retry-After, a redirect and a redirect loop.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path

import pytest
from aiohttp import web
from conftest import FIXTURE_CHARTS
from PIL import Image

from zuhyo.images.fetch import afetch_images, cached_path_for_url, fetch_images
from zuhyo.images.load import read_image_bytes
from zuhyo.images.store import ImageStore, sha256_hex
from zuhyo.schema import ImageRef

CHARTS = ["late_night_viewers.png", "monthly_rainfall.png", "energy_mix.png", "survey_by_age.png",
          "quarterly_sales.png", "owid_life_expectancy.png", "owid_co2_per_capita.png", "web_shops_followers.png"]
MIB = 1024 * 1024


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


@cache
def bomb_png(width: int = 40000, height: int = 40000) -> bytes:
    """A valid 1-bit all-black PNG of width x height: ~200 KB on disk, 1.6 G pixels when decoded."""
    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte + packed bits
    comp = zlib.compressobj(9)
    parts = [comp.compress(row * 1000) for _ in range(height // 1000)]
    parts += [comp.compress(row * (height % 1000)), comp.flush()]
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", b"".join(parts)) + _chunk(b"IEND", b"")


def chart_bytes(name: str) -> bytes:
    return (FIXTURE_CHARTS / name).read_bytes()


def as_jpeg(png: bytes) -> bytes:
    buf = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(buf, "JPEG", quality=85)
    return buf.getvalue()


class ImageServer:
    """aiohttp app in a background thread; records hits, arrival times and the peak of concurrent handlers."""

    def __init__(self, work_s: float = 0.05, host: str = "127.0.0.1") -> None:
        self.work_s = work_s
        self.host = host
        self.hits: Counter[str] = Counter()
        self.arrivals: dict[str, list[float]] = defaultdict(list)
        self.starts: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.images: dict[str, tuple[bytes, str]] = {}
        for i, name in enumerate(CHARTS[:4]):
            self.images[f"chart{i}.png"] = (chart_bytes(name), "image/png")
        for i, name in enumerate(CHARTS[4:6]):
            self.images[f"chart{i}.jpg"] = (as_jpeg(chart_bytes(name)), "image/jpeg")
        self.images["redirected.png"] = (chart_bytes(CHARTS[6]), "image/png")
        self.images["recovered.png"] = (chart_bytes(CHARTS[7]), "image/png")
        good = chart_bytes(CHARTS[0])
        self.images["corrupt.png"] = (good[: len(good) // 2], "image/png")
        self.images["page.html"] = (b"<!DOCTYPE html><html><body>Not found, try again</body></html>", "text/html")
        self.images["bomb.png"] = (bomb_png(), "image/png")

    @web.middleware
    async def _track(self, request: web.Request, handler):  # type: ignore[no-untyped-def]
        self.hits[request.path] += 1
        now = time.monotonic()
        self.arrivals[request.path].append(now)
        self.starts.append(now)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await handler(request)
        finally:
            self.in_flight -= 1

    async def _image(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self.images:
            raise web.HTTPNotFound()
        await asyncio.sleep(self.work_s)
        body, ctype = self.images[name]
        return web.Response(body=body, content_type=ctype)

    async def _flaky(self, request: web.Request) -> web.Response:
        if self.hits[request.path] == 1:
            return web.Response(status=503, headers={"Retry-After": "1"}, text="busy")
        body, ctype = self.images["recovered.png"]
        return web.Response(body=body, content_type=ctype)

    async def _slow(self, request: web.Request) -> web.Response:
        await asyncio.sleep(3)
        return web.Response(body=chart_bytes(CHARTS[0]), content_type="image/png")

    async def _huge_declared(self, request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG\r\n\x1a\n" + b"\x00" * (2 * MIB - 8), content_type="image/png")

    async def _huge_stream(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "image/png"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        try:
            for _ in range(64):  # up to 16 MiB unless the client hangs up first
                await resp.write(b"\x00" * (256 * 1024))
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    async def _cut_once(self, request: web.Request) -> web.StreamResponse:
        body = self.images["recovered.png"][0]
        if self.hits[request.path] > 1:
            return web.Response(body=body, content_type="image/png")
        resp = web.StreamResponse(headers={"Content-Type": "image/png", "Content-Length": str(len(body))})
        await resp.prepare(request)
        await resp.write(body[: len(body) // 3])
        assert request.transport is not None
        request.transport.close()  # hang up with two thirds of the declared body unsent
        return resp

    def _redirect(self, target: str):  # type: ignore[no-untyped-def]
        async def handler(request: web.Request) -> web.Response:
            raise web.HTTPFound(target)

        return handler

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._track])
        app.router.add_get("/img/{name}", self._image)
        app.router.add_get("/flaky.png", self._flaky)
        app.router.add_get("/slow.png", self._slow)
        app.router.add_get("/cut-once.png", self._cut_once)
        app.router.add_get("/huge-declared.png", self._huge_declared)
        app.router.add_get("/huge-stream.png", self._huge_stream)
        app.router.add_get("/missing.png", self._status(404))
        app.router.add_get("/forbidden.png", self._status(403))
        app.router.add_get("/redirect.png", self._redirect("/img/redirected.png"))
        app.router.add_get("/loop-a", self._redirect("/loop-b"))
        app.router.add_get("/loop-b", self._redirect("/loop-a"))
        app.router.add_get("/to", self._redirect_to_query)
        return app

    @staticmethod
    async def _redirect_to_query(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["u"])

    @staticmethod
    def _status(code: int):  # type: ignore[no-untyped-def]
        async def handler(request: web.Request) -> web.Response:
            return web.Response(status=code, text="no")

        return handler

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def __enter__(self) -> ImageServer:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    async def _start(self) -> None:
        # handler_cancellation: a handler stops when the client hangs up (timeouts, aborted bodies).
        self.runner = web.AppRunner(self.app(), handler_cancellation=True, shutdown_timeout=1.0, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.host, 0)
        await site.start()
        self.port = self.runner.addresses[0][1]

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture()
def server():  # type: ignore[no-untyped-def]
    with ImageServer() as srv:
        yield srv


GOOD = {  # item id -> served path (all must end up fetched)
    "png-0": "/img/chart0.png", "png-1": "/img/chart1.png", "png-2": "/img/chart2.png", "png-3": "/img/chart3.png",
    "jpg-0": "/img/chart0.jpg", "jpg-1": "/img/chart1.jpg", "png-0-again": "/img/chart0.png",
    "redirect": "/redirect.png", "flaky": "/flaky.png",
}
BAD = {  # item id -> (served path or literal URL, substrings the error message must contain)
    "corrupt": ("/img/corrupt.png", ["corrupt or truncated PNG"]),
    "html": ("/img/page.html", ["served as text/html", "looks like an HTML page"]),
    "bomb": ("/img/bomb.png", ["40000x40000", "decompression bomb"]),
    "huge-declared": ("/huge-declared.png", ["Content-Length 2,097,152 bytes > limit 1,048,576"]),
    "huge-stream": ("/huge-stream.png", ["over the 1,048,576-byte limit", "aborted"]),
    "slow": ("/slow.png", ["timed out after 0.5 s", "gave up after 2 attempts"]),
    "missing": ("/missing.png", ["HTTP 404 Not Found"]),
    "forbidden": ("/forbidden.png", ["HTTP 403 Forbidden"]),
    "loop": ("/loop-a", ["redirect loop", "/loop-a -> ", "/loop-b -> "]),
    "ftp": ("ftp://127.0.0.1/chart.png", ["unsupported URL scheme 'ftp'"]),
    "relative": ("charts/chart.png", ["not an absolute URL"]),
}
OPTIONS = dict(concurrency=8, per_host=3, delay_s=0.01, retries=1, timeout_s=0.5, backoff_s=0.05, max_bytes=MIB)


def _url(srv: ImageServer, path: str) -> str:
    return srv.url(path) if path.startswith("/") else path


def items_for(srv: ImageServer) -> list[tuple[str, str]]:
    pairs = [(item, _url(srv, path)) for item, path in GOOD.items()]
    pairs += [(item, _url(srv, path)) for item, (path, _) in BAD.items()]
    return pairs


def expected_bytes(srv: ImageServer, item: str) -> bytes:
    name = {"redirect": "redirected.png", "flaky": "recovered.png"}.get(item) or GOOD[item].rsplit("/", 1)[1]
    return srv.images[name][0]


def check_first_run(report, srv: ImageServer, store: ImageStore) -> None:  # type: ignore[no-untyped-def]
    assert (report.items, report.urls) == (20, 17)
    assert (report.fetched, report.skipped, report.failed) == (9, 0, 11)
    assert [e.item_id for e in report.errors] == list(BAD)  # input order
    for err in report.errors:
        path, needles = BAD[err.item_id]
        assert err.url == _url(srv, path)
        for needle in needles:
            assert needle in err.message, (err.item_id, err.message)
    distinct = {GOOD[i] for i in GOOD if i not in ("redirect", "flaky")}
    assert report.bytes == sum(len(expected_bytes(srv, i)) for i in GOOD if i != "png-0-again")
    # Stored bytes are exactly the served bytes, under their content hash; the index maps each URL to them.
    for item, path in GOOD.items():
        stored = cached_path_for_url(store.root, srv.url(path))
        assert stored is not None and stored.read_bytes() == expected_bytes(srv, item)
        sha = sha256_hex(expected_bytes(srv, item))
        assert stored == store.root / sha[:2] / (sha[2:] + (".jpg" if path.endswith(".jpg") else ".png"))
    assert len(list(store)) == len(distinct) + 2
    # No retry on 404/403/redirect loops/over-size; one retry (honouring Retry-After: 1) for the 503.
    for path in ("/missing.png", "/forbidden.png", "/huge-declared.png", "/img/page.html", "/img/chart0.png"):
        assert srv.hits[path] == 1, path
    assert srv.hits["/flaky.png"] == 2
    first, second = srv.arrivals["/flaky.png"]
    assert second - first >= 0.95
    assert srv.hits["/slow.png"] == 2  # timeouts are retried (retries=1)
    assert srv.hits["/loop-a"] == 1 and srv.hits["/loop-b"] == 1
    assert srv.hits["/img/redirected.png"] == 1


def test_fetch_library_end_to_end_and_resume(server: ImageServer, tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "store")
    events = []
    report = fetch_images(items_for(server), store, progress=events.append, **OPTIONS)
    check_first_run(report, server, store)
    assert sum(len(e.item_ids) for e in events) == 20
    assert Counter(e.outcome for e in events for _ in e.item_ids) == {"fetched": 9, "failed": 11}

    # Resume: every good image skipped without a request; the failed ones are tried again.
    before = Counter(server.hits)
    again = fetch_images(items_for(server), store, **OPTIONS)
    assert (again.fetched, again.skipped, again.failed) == (0, 9, 11)
    for path in GOOD.values():
        assert server.hits[path] == before[path], path
    assert server.hits["/missing.png"] == before["/missing.png"] + 1

    # A stored file damaged on disk no longer counts as fetched: only that URL is downloaded again.
    damaged = cached_path_for_url(store.root, server.url("/img/chart1.png"))
    assert damaged is not None
    damaged.write_bytes(b"\x89PNG garbage")
    third = fetch_images([(i, server.url(p)) for i, p in GOOD.items()], store, **OPTIONS)
    assert (third.fetched, third.skipped, third.failed) == (1, 8, 0)
    assert server.hits["/img/chart1.png"] == before["/img/chart1.png"] + 1
    assert damaged.read_bytes() == expected_bytes(server, "png-1")


async def test_async_politeness_per_host_and_delay(tmp_path: Path) -> None:
    with ImageServer(work_s=0.15) as srv:
        items = [(f"i{k}", srv.url(f"/img/chart{k % 4}.png?copy={k}")) for k in range(12)]
        report = await afetch_images(items, ImageStore(tmp_path / "s"), concurrency=16, per_host=2, delay_s=0.1,
                                     retries=0, timeout_s=5)
        assert (report.fetched, report.failed) == (12, 0)
        assert srv.max_in_flight == 2  # reached, never exceeded
        gaps = [b - a for a, b in zip(srv.starts, srv.starts[1:], strict=False)]
        # Request starts to one host are spaced by the politeness delay (0.1 s); the margin absorbs scheduling
        # jitter between the client's send and the server's receipt on a loaded machine.
        assert min(gaps) >= 0.06


async def test_global_concurrency_bound(tmp_path: Path) -> None:
    with ImageServer(work_s=0.05) as srv:
        items = [(f"i{k}", srv.url(f"/img/chart{k % 4}.png?n={k}")) for k in range(6)]
        report = await afetch_images(items, ImageStore(tmp_path / "s"), concurrency=1, per_host=4, delay_s=0)
        assert report.fetched == 6 and srv.max_in_flight == 1


def test_fetch_images_refuses_running_loop(tmp_path: Path) -> None:
    async def inner() -> None:
        with pytest.raises(RuntimeError, match="afetch_images"):
            fetch_images([], ImageStore(tmp_path / "s"))

    asyncio.run(inner())


def _write_bench(srv: ImageServer, path: Path) -> None:
    rows = [{"id": item, "benchmark": "urlbench", "question": f"What does {item} show?", "answers": ["x"],
             "image": {"url": url}} for item, url in items_for(srv)]
    local = path.parent / "local.png"
    local.write_bytes(chart_bytes(CHARTS[0]))
    rows.append({"id": "local-file", "benchmark": "urlbench", "question": "q", "answers": ["a"],
                 "image": {"path": "local.png", "url": srv.url("/img/never-requested.png")}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    # A wide terminal, so rich does not wrap the messages asserted on.
    env = {**os.environ, "COLUMNS": "1000"}
    return subprocess.run([sys.executable, "-c", "from zuhyo.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_cli_fetch_json_strict_and_resume(server: ImageServer, tmp_path: Path) -> None:
    bench = tmp_path / "bench.jsonl"
    _write_bench(server, bench)
    out = tmp_path / "images"
    common = ["images", "fetch", "local", "--path", str(bench), "--out", str(out), "--concurrency", "8",
              "--per-host", "3", "--delay", "0.01", "--retries", "1", "--timeout", "0.5", "--backoff", "0.05",
              "--max-mb", "1"]
    proc = _cli(*common, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["benchmark"] == "urlbench" and summary["out"] == str(out)
    assert (summary["samples"], summary["with_url"]) == (21, 20)
    assert (summary["fetched"], summary["skipped"], summary["failed"]) == (9, 0, 11)
    assert [e["item_id"] for e in summary["errors"]] == list(BAD)
    assert all(e["url"] == _url(server, BAD[e["item_id"]][0]) for e in summary["errors"])
    assert "11 of 20 images failed" in proc.stderr
    assert server.hits["/img/never-requested.png"] == 0

    # The fetched store is what `read_image_bytes` reads URL-only samples from.
    for item, path in GOOD.items():
        assert read_image_bytes(ImageRef(url=server.url(path)), None, cache_dir=out) == expected_bytes(server, item)

    before = Counter(server.hits)
    proc = _cli(*common, "--strict")
    assert proc.returncode == 1
    assert "0 fetched, 9 already present, 11 failed" in proc.stdout  # the result: stdout; failures: stderr
    # stderr is a pipe, not a terminal: plain progress lines (done/total, rate, errors) instead of a live bar.
    assert "fetching images: 20/20 (100.0 %), " in proc.stderr and ", 11 errors, " in proc.stderr
    assert "11 of 20 images failed" in proc.stderr
    assert "missing <" + server.url("/missing.png") + ">: HTTP 404 Not Found" in proc.stderr
    assert all(server.hits[p] == before[p] for p in GOOD.values())


def test_cli_reports_missing_benchmark_file(tmp_path: Path) -> None:
    proc = _cli("images", "fetch", "local", "--path", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert "nope.jsonl does not exist" in proc.stderr


def test_connection_errors_are_retried(server: ImageServer, tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "s")
    report = fetch_images([("cut", server.url("/cut-once.png"))], store, retries=2, backoff_s=0.01, delay_s=0)
    assert (report.fetched, report.failed) == (1, 0) and server.hits["/cut-once.png"] == 2
    assert cached_path_for_url(store.root, server.url("/cut-once.png")).read_bytes() == \
        server.images["recovered.png"][0]

    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/x.png"
    report = fetch_images([("refused", closed)], store, retries=2, backoff_s=0.01)
    assert report.failed == 1
    msg = report.errors[0].message
    assert msg.startswith("connection error: ") and msg.endswith("(gave up after 3 attempts)")
    # A failure is recorded in the index (so resume retries it) and never shadows a good record.
    rec = store.index.get(closed)
    assert rec is not None and rec.status == "failed" and rec.message == msg


def test_retry_after_and_backoff_and_url_checks() -> None:
    from email.utils import formatdate

    from zuhyo.images.fetch import backoff_delay, check_url, parse_retry_after

    now = time.time()
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None and parse_retry_after("") is None
    for attempt in range(5):
        d = backoff_delay(attempt, 0.5)
        assert 0.5 * 2**attempt <= d < 0.5 * 2 ** (attempt + 1)
    assert backoff_delay(30, 0.5) == 60.0
    assert check_url("https://www.soumu.go.jp/a/b.png") is None
    assert check_url("HTTP://127.0.0.1:8080/x") is None
    assert check_url("file:///etc/passwd") == "unsupported URL scheme 'file' (only http and https)"
    assert check_url("http:///x.png") == "URL has no host"
    assert check_url("http://127.0.0.1:99999/x") is not None and "port" in check_url("http://127.0.0.1:99999/x")
    assert check_url("") == "empty URL" and check_url(None) == "empty URL"


def test_rejects_bad_options(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="per_host"):
        fetch_images([], ImageStore(tmp_path), per_host=0)


def test_cli_fetches_a_url_only_hakushobench_file(server: ImageServer, tmp_path: Path) -> None:
    # The later HakushoBench revisions' layout: question, answer, original_id, image_url (no embedded image).
    rows = [{"question": "令和4年度の割合は何%か。", "answer": "12.3%", "original_id": f"hb-{k}",
             "image_url": server.url(f"/img/chart{k}.png")} for k in range(3)]
    rows.append({"question": "q", "answer": "a", "original_id": "hb-404", "image_url": server.url("/missing.png")})
    bench = tmp_path / "hakusho.jsonl"
    bench.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "hb-images"
    proc = _cli("images", "fetch", "hakusho", "--path", str(bench), "--out", str(out), "--delay", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["benchmark"], summary["fetched"], summary["failed"]) == ("hakusho", 3, 1)
    assert summary["errors"] == [{"item_id": "hb-404", "url": server.url("/missing.png"),
                                  "message": "HTTP 404 Not Found"}]
    for k in range(3):
        ref = ImageRef(url=server.url(f"/img/chart{k}.png"))
        assert read_image_bytes(ref, None, cache_dir=out) == server.images[f"chart{k}.png"][0]


# -- redirects into private networks (issue 8, item 10) ---------------------------------------------------------


@pytest.fixture()
def other_host():  # type: ignore[no-untyped-def]
    """A second image server on 127.0.0.2: another machine, as far as addresses go (loopback, not public)."""
    try:
        with ImageServer(host="127.0.0.2") as srv:
            yield srv
    except OSError as e:
        pytest.skip(f"cannot listen on 127.0.0.2: {e}")


def _via(srv: ImageServer, target: str) -> str:
    from urllib.parse import quote

    return srv.url("/to?u=" + quote(target, safe=""))


def test_redirects_into_private_addresses_are_refused(server: ImageServer, other_host: ImageServer,
                                                      tmp_path: Path) -> None:
    items = [
        ("to-other-host", _via(server, other_host.url("/img/chart0.png"))),
        ("to-metadata", _via(server, "http://169.254.169.254/latest/meta-data/chart.png")),
        ("to-lan", _via(server, "http://10.1.2.3/chart.png")),
        ("to-v6-loopback", _via(server, "http://[::1]:9/chart.png")),
        ("same-host", _via(server, server.url("/img/chart1.png"))),  # the host the URL names: followed
        ("named-directly", other_host.url("/img/chart2.png")),  # a private host the user names: taken as given
    ]
    opts = {**OPTIONS, "retries": 0, "timeout_s": 2.0}
    report = fetch_images(items, ImageStore(tmp_path / "s"), **opts)
    assert (report.fetched, report.failed) == (2, 4)
    errors = {e.item_id: e.message for e in report.errors}
    assert "127.0.0.2 is a loopback address" in errors["to-other-host"]
    assert "169.254.169.254 is a link-local address" in errors["to-metadata"]
    assert "10.1.2.3 is a private address" in errors["to-lan"]
    assert "::1 is a loopback address" in errors["to-v6-loopback"]
    assert all("refused" in m and "--allow-private-hosts" in m for m in errors.values())
    assert other_host.hits["/img/chart0.png"] == 0  # refused before it was requested
    assert other_host.hits["/img/chart2.png"] == 1

    allowed = fetch_images(items[:1], ImageStore(tmp_path / "a"), **opts, allow_private_hosts=True)
    assert (allowed.fetched, allowed.failed) == (1, 0) and other_host.hits["/img/chart0.png"] == 1


def test_which_addresses_are_public_is_injectable(server: ImageServer, other_host: ImageServer,
                                                  tmp_path: Path) -> None:
    """With 127.0.0.1 taken for a public host, its redirect to 127.0.0.2 is the public-to-private case."""
    items = [("public-to-private", _via(server, other_host.url("/img/chart0.png")))]
    only_first_public = fetch_images(items, ImageStore(tmp_path / "s"), **OPTIONS,
                                     is_public=lambda ip: str(ip) == "127.0.0.1")
    assert only_first_public.failed == 1 and "loopback address" in only_first_public.errors[0].message
    all_public = fetch_images(items, ImageStore(tmp_path / "t"), **OPTIONS, is_public=lambda ip: True)
    assert all_public.fetched == 1 and other_host.hits["/img/chart0.png"] == 1


def test_public_address_classes() -> None:
    import ipaddress

    from zuhyo.images.fetch import is_public_address

    public = ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"]
    private = ["127.0.0.1", "127.0.0.2", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
               "0.0.0.0", "224.0.0.1", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254"]
    assert all(is_public_address(ipaddress.ip_address(a)) for a in public)
    assert not any(is_public_address(ipaddress.ip_address(a)) for a in private)


def test_cli_allow_private_hosts(server: ImageServer, other_host: ImageServer, tmp_path: Path) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "hop", "benchmark": "b", "question": "q", "answers": ["a"],
                                 "image": {"url": _via(server, other_host.url("/img/chart3.png"))}}) + "\n")
    common = ["images", "fetch", "local", "--path", str(bench), "--delay", "0", "--retries", "0", "--json"]
    refused = json.loads(_cli(*common, "--out", str(tmp_path / "o1")).stdout)
    assert refused["failed"] == 1 and "127.0.0.2 is a loopback address" in refused["errors"][0]["message"]
    followed = json.loads(_cli(*common, "--out", str(tmp_path / "o2"), "--allow-private-hosts").stdout)
    assert followed["fetched"] == 1 and other_host.hits["/img/chart3.png"] == 1
