"""crawl_edition against a real aiohttp server on 127.0.0.1 serving the fixture white-paper sites.

The soumu fixture's table of contents links a missing page (404), pages that link back to it (a cycle), an
older edition, a text mirror, an Excel file and an external site: only the edition's pages may be requested,
each once, robots.txt first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from zuhyo.construct.collect.crawl import CrawlReport, crawl_edition
from zuhyo.construct.collect.html_figures import ExtractedFigure
from zuhyo.construct.collect.profiles import load_profile
from zuhyo.images.fetch import PageFetchError, PoliteFetcher

SITES = Path(__file__).resolve().parent / "fixtures" / "whitepaper_sites"
R05 = "/johotsusintokei/whitepaper/ja/r05/html/"
FAST = {"delay_s": 0.0, "retries": 0, "timeout_s": 10.0}


class SiteServer:
    """One fixture site as static files, a configurable robots.txt, and a log of every request path."""

    def __init__(self, root: Path, robots: tuple[int, str] = (404, "")) -> None:
        self.root = root
        self.robots = robots
        self.requests: Counter[str] = Counter()
        self.base = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests[request.path] += 1
        if request.path == "/robots.txt":
            status, text = self.robots
            return web.Response(status=status, text=text)
        if request.path == "/in/moved.html":
            raise web.HTTPFound("/out/elsewhere.html")
        if request.path.endswith("/not-html.html"):
            return web.Response(body=b"\x89PNG....", content_type="image/png")
        path = (self.root / request.path.lstrip("/")).resolve()
        if not path.is_file() or self.root.resolve() not in path.parents:
            return web.Response(status=404, text="not found")
        return web.Response(body=path.read_bytes(), content_type="text/html", charset="utf-8")


@pytest.fixture
async def serve() -> AsyncIterator:
    runners: list[web.AppRunner] = []

    async def start(site: str, robots: tuple[int, str] = (404, "")) -> SiteServer:
        server = SiteServer(SITES / site, robots)
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", server.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        tcp = web.TCPSite(runner, "127.0.0.1", 0)
        await tcp.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        server.base = f"http://127.0.0.1:{port}"
        return server

    yield start
    for runner in runners:
        await runner.cleanup()


async def collect(start: list[str], profile: str, report: CrawlReport,
                  **kw: object) -> list[tuple[str, ExtractedFigure]]:
    return [item async for item in crawl_edition(start, load_profile(profile), report=report, **{**FAST, **kw})]


async def test_crawl_soumu_edition(serve) -> None:
    server = await serve("soumu")
    report = CrawlReport()
    got = await collect([server.base + R05 + "index.html"], "soumu", report)
    pages = [R05 + p for p in ("index.html", "nd112100.html", "nd121200.html", "nd212100.html", "nd999999.html")]
    # robots.txt once, every in-scope page exactly once (the cycle index ↔ nd112100 does not loop), nothing else:
    # not the 令和4年版 edition, the text mirror, the Excel file, the logo link or the external site
    assert server.requests == Counter({"/robots.txt": 1, **{p: 1 for p in pages}})
    assert report.scopes == [server.base + "/johotsusintokei/whitepaper/ja/r05/"]
    assert [(e.url.removeprefix(server.base), e.status) for e in report.errors] == [(R05 + "nd999999.html", 404)]
    assert report.pages == 4 and report.figures == len(got) == 6 and report.skipped_images == 1
    numbers = [(url.removeprefix(server.base), fig.figure_number) for url, fig in got]
    assert numbers == [(R05 + "nd112100.html", "1-1-2-1"), (R05 + "nd121200.html", "2-1-2-1"),
                       (R05 + "nd121200.html", "2-1-2-3"), (R05 + "nd121200.html", "2-1-2-4"),
                       (R05 + "nd121200.html", None), (R05 + "nd212100.html", "2-1-1-1")]
    first = got[0][1]
    assert first.image_url == server.base + R05 + "img/n1102010.png"
    assert first.source == "総務省作成資料" and first.edition_year == 2023
    # nd121200 has <base href="https://www.soumu.go.jp/…">: its URLs resolve there (and are not crawled)
    assert got[1][1].image_url == "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/html/img/n2102010.png"


async def test_robots_txt_is_obeyed(serve) -> None:
    server = await serve("soumu", (200, f"User-agent: *\nDisallow: {R05}nd212100.html\n\n"
                                        f"User-agent: zuhyo-collect\nDisallow: {R05}nd1\n"))
    report = CrawlReport()
    got = await collect([server.base + R05 + "index.html"], "soumu", report)
    # the zuhyo-collect group applies (not the * group): nd1* pages are blocked, nd212100 is allowed
    assert [u.removeprefix(server.base) for u in report.robots_blocked] == [R05 + "nd112100.html",
                                                                            R05 + "nd121200.html"]
    assert server.requests[R05 + "nd112100.html"] == 0 and server.requests[R05 + "nd212100.html"] == 1
    assert [fig.figure_number for _, fig in got] == ["2-1-1-1"]


async def test_robots_txt_server_error_blocks_everything(serve) -> None:
    server = await serve("soumu", (503, "busy"))
    report = CrawlReport()
    assert await collect([server.base + R05 + "index.html"], "soumu", report) == []
    assert server.requests == Counter({"/robots.txt": 1})
    assert len(report.robots_blocked) == 1 and report.pages == 0


async def test_crawl_figure_list_adds_back_data(serve) -> None:
    server = await serve("mod")
    report = CrawlReport()
    got = await collect([server.base + "/hakusho_data/2023/html/zuhyo.html"], "mod", report)
    by_number = {fig.figure_number: fig for _, fig in got}
    assert sorted(by_number) == ["I-2-1-1", "I-2-1-2", "I-3-1"]
    assert by_number["I-2-1-1"].back_data == [server.base + "/hakusho_data/2023/csv/zuhyo01020101.csv"]
    assert by_number["I-2-1-2"].back_data == []
    assert by_number["I-3-1"].back_data == [server.base + "/hakusho_data/2023/csv/zuhyo01030001.csv"]
    assert sorted(e.url.rsplit("/", 1)[1] for e in report.errors) == ["index.html", "n31100000.html",
                                                                      "n51000000.html"]
    assert all(e.status == 404 for e in report.errors)
    assert server.requests["/hakusho_data/2023/csv/zuhyo01020101.csv"] == 0  # back data is linked, not crawled
    assert max(server.requests.values()) == 1


async def test_max_pages_and_bad_pages(serve, tmp_path: Path) -> None:
    server = await serve("soumu")
    report = CrawlReport()
    got = await collect([server.base + R05 + "index.html"], "soumu", report, max_pages=2)
    assert report.pages == 2 and len(got) == 1
    assert report.errors[-1].message == "page limit of 2 reached; 3 pages not fetched"
    # a redirect out of scope and a page that is not HTML are errors with reasons; the crawl goes on
    report = CrawlReport()
    got = await collect([server.base + "/in/moved.html", server.base + "/in/not-html.html"], "generic", report,
                        scope=server.base + "/in/")
    assert got == [] and report.pages == 0
    assert [e.message for e in report.errors] == [
        f"redirected to {server.base}/out/elsewhere.html: outside the crawl scope (not followed)",
        "not an HTML page (served as image/png)"]
    assert report.errors[0].status == 302
    assert server.requests["/out/elsewhere.html"] == 0  # the redirect target was never requested


async def test_polite_fetcher_reports_status(serve) -> None:
    server = await serve("soumu")
    async with PoliteFetcher(**FAST) as fetcher:
        page = await fetcher.get(server.base + R05 + "index.html")
        assert page.url == server.base + R05 + "index.html" and page.content_type.startswith("text/html")
        with pytest.raises(PageFetchError) as info:
            await fetcher.get(server.base + R05 + "missing.html")
        assert info.value.status == 404 and "HTTP 404" in info.value.message
        with pytest.raises(PageFetchError, match="unsupported URL scheme"):
            await fetcher.get("ftp://example.org/a.html")
    with pytest.raises(RuntimeError, match="outside"):
        await PoliteFetcher().get(server.base)


async def test_a_huge_crawl_delay_is_capped_and_reported(serve) -> None:
    import time

    server = await serve("soumu", (200, "User-agent: *\nCrawl-delay: 86400\n"))
    report = CrawlReport()
    start = time.perf_counter()
    got = await collect([server.base + R05 + "index.html"], "soumu", report, max_crawl_delay_s=0.2)
    elapsed = time.perf_counter() - start
    assert report.pages == 4 and len(got) == 6  # the crawl went on (it stalled for good after one page)
    assert 0.2 * 3 <= elapsed < 30  # four more requests, each after the capped delay
    host = server.base.removeprefix("http://")
    assert report.crawl_delays_capped == [f"{host}: robots.txt asks for 86400 s between requests; waited 0.2 s "
                                          "(--max-crawl-delay)"]
