"""`zuhyo collect html` end to end: the real CLI against a real aiohttp server on 127.0.0.1 serving the fixture
white-paper sites (tests/fixtures/whitepaper_sites/) with real PNGs generated here.

The soumu table of contents links a missing page (404), a page that fails with HTTP 500 (added here), the
previous edition, a text mirror, an Excel file and an external site; one section page sets
``<base href="https://www.soumu.go.jp/…">`` so its images lie outside the crawl scope, and one image is made an
HTML page here. Every request the server gets is logged.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

SITES = Path(__file__).resolve().parent / "fixtures" / "whitepaper_sites"
R05 = "/johotsusintokei/whitepaper/ja/r05/html/"
R04 = "/johotsusintokei/whitepaper/ja/r04/html/"
REPORT = "/report/2024/"
FAST = ("--delay", "0")


def write_png(path: Path, seed: int, size: tuple[int, int] = (64, 48)) -> None:
    """A real, distinct bar-chart-like PNG."""
    from PIL import Image, ImageDraw

    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(im)
    for i in range(4):
        h = 8 + (seed * 7 + i * 11) % (size[1] - 10)
        draw.rectangle((4 + i * 14, size[1] - h, 14 + i * 14, size[1] - 1), fill=(40 * i, 90, (seed * 53) % 256))
    im.save(path)


def build_site(root: Path) -> Path:
    """soumu r05 (+ an r04 copy) and the generic report, with generated images, a 500 page and a non-image."""
    shutil.copytree(SITES / "soumu", root, dirs_exist_ok=True)
    shutil.copytree(SITES / "generic", root, dirs_exist_ok=True)
    shutil.copytree(SITES / "mod", root, dirs_exist_ok=True)
    r05 = root / R05.strip("/")
    for i, png in enumerate(sorted((r05 / "img").glob("*.png"))):
        write_png(png, i)
    (r05 / "img" / "n2101010.png").write_bytes(b"<html><body>Not Found</body></html>")  # an <img> that is no image
    toc = r05 / "index.html"
    toc.write_text(toc.read_text(encoding="utf-8").replace(
        '<li><a href="nd999999.html">', '<li><a href="nd500500.html">障害</a></li>\n  <li><a href="nd999999.html">'),
        encoding="utf-8")
    shutil.copytree(r05, root / R04.strip("/"))
    for i, name in enumerate(("gdp", "exports", "imports", "ports", "energy")):
        write_png(root / "report" / "2024" / "charts" / f"{name}.png", 10 + i, (80 + i, 60))
    return root


class Site:
    """Static files under ``root``; ``nd500500.html`` answers 500 (Retry-After: 0); every request is logged."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.requests: Counter[str] = Counter()
        self.base = ""
        self.image_delay_s = 0.0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests[request.path] += 1
        if request.path.endswith(".png") and self.image_delay_s:
            await asyncio.sleep(self.image_delay_s)
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path.endswith("/nd500500.html"):
            return web.Response(status=500, text="boom", headers={"Retry-After": "0"})
        path = (self.root / request.path.lstrip("/")).resolve()
        if not path.is_file() or self.root not in path.parents:
            return web.Response(status=404, text="not found")
        kind = {".html": "text/html", ".png": "image/png"}.get(path.suffix, "application/octet-stream")
        return web.Response(body=path.read_bytes(), content_type=kind)


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    server = Site(build_site(tmp_path / "site"))
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    server.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    yield server
    await runner.cleanup()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    return path


def cli(*args: str, **kw: object) -> Awaitable:
    """Run the CLI in a thread, so that the server on this test's event loop keeps answering."""
    return asyncio.to_thread(run_cli_json, *args, **kw)


async def test_collect_html_end_to_end_and_rerun(site: Site, ws: Path) -> None:
    urls = [site.base + R05 + "index.html", site.base + REPORT + "index.html"]
    first = await cli("collect", "html", str(ws), *urls, *FAST)
    assert first["editions"] == [site.base + R05, site.base + REPORT]  # no profile for 127.0.0.1: generic
    assert first["pages"] == 5 and first["documents"] == 5 and first["unreachable"] == []
    assert first["figures"] == 7 and first["images_fetched"] == 7 and first["skipped_images"] == 5
    reasons = sorted(e["reason"].replace(site.base + "/", "/") for e in first["error_items"])
    assert first["errors"] == len(reasons) == 7
    assert reasons[0] == (f"image {R05}img/n2101010.png on {R05}nd212100.html: not a usable image (served as "
                          "image/png): not an image in a supported format (PNG, JPEG, GIF, WEBP, BMP, TIFF); looks "
                          "like an HTML page")
    assert reasons[1:5] == [f"image https://www.soumu.go.jp{R05}img/{name}.png on {R05}nd121200.html: outside "
                            f"the crawl scope {site.base} (not fetched)"
                            for name in ("n2102010", "n2102030", "n2102040", "photo_g7")]
    assert reasons[5:] == [f"page {R05}nd500500.html: HTTP 500 Internal Server Error (gave up after 4 attempts)",
                           f"page {R05}nd999999.html: HTTP 404 Not Found"]
    # nothing outside the scope was requested: not the 令和4年版 edition, not the site's logo or other pages
    assert all(p.startswith((R05, REPORT)) or p == "/robots.txt" for p in site.requests), site.requests
    assert site.requests["/robots.txt"] == 1  # one host, asked once
    assert site.requests[R05 + "nd500500.html"] == 4  # retried (Retry-After: 0), then counted as an error
    images_before = {p: n for p, n in site.requests.items() if p.endswith(".png")}
    assert set(images_before.values()) == {1} and len(images_before) == 8  # 7 figures and the non-image

    figures = {f["locator"].replace(site.base, ""): f for f in run_cli_json("figures", str(ws))["figures"]}
    gdp = figures[REPORT + "charts/gdp.png"]
    assert gdp["caption"] == "Figure 1: Real GDP, 2015-2024" and gdp["figure_number"] == "Figure 1"
    assert gdp["page_url"] == site.base + REPORT + "index.html" and (gdp["width"], gdp["height"]) == (80, 60)
    soumu = figures[R05 + "img/n1102010.png"]
    assert soumu["figure_number"] == "図表1-1-2-1" and soumu["caption"].startswith("図表1-1-2-1")
    assert soumu["page_url"] == site.base + R05 + "nd112100.html"
    assert figures[REPORT + "charts/imports.png"]["caption"] == "Figure 3. Imports by product"

    status = run_cli_json("status", str(ws))
    assert status["figures"] == 7 and status["documents"] == 5
    assert status["stages"]["collect"]["errors"] == 7 and status["stages"]["collect"]["by_kind"] == {"html": 7}

    # a re-run adds nothing, downloads no image again, and counts the same errors (refreshed, not added)
    again = await cli("collect", "html", str(ws), *urls, *FAST)
    assert (again["figures"], again["documents"], again["images_fetched"]) == (0, 0, 0)
    assert again["skipped_existing"] == 7 and again["errors"] == 7
    # pages whose figures are all recorded are not fetched again (their stored links are followed); pages with
    # a failed figure, and the failed pages, are
    assert again["pages_known"] == 3 and again["pages"] == 2
    assert [site.requests[R05 + p] for p in ("index.html", "nd112100.html", "nd121200.html", "nd212100.html",
                                             "nd999999.html")] == [1, 1, 2, 2, 2]
    assert site.requests[REPORT + "index.html"] == 1 and site.requests["/robots.txt"] == 2
    # the failed image is tried again (it may have been fixed); no recorded figure's image is downloaded again
    images_before[R05 + "img/n2101010.png"] += 1
    assert {p: n for p, n in site.requests.items() if p.endswith(".png")} == images_before
    status = run_cli_json("status", str(ws))
    assert status["figures"] == 7 and status["stages"]["collect"]["errors"] == 7


async def test_figure_provenance_in_the_database(site: Site, ws: Path) -> None:
    await cli("collect", "html", str(ws), site.base + R05 + "nd112100.html", "--profile", "soumu", *FAST)
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.tables import FigureRow

    with Workspace.open(ws) as w, w.db.read() as s:
        (row,) = s.query(FigureRow).all()
        assert row.year == 2023 and row.edition == "r05" and row.section and "第1節" in row.section
        assert row.provenance["source"] == "総務省作成資料" and row.provenance["profile"] == "soumu"
        assert row.provenance["headings"] and row.mime == "image/png"
        assert w.images.verify(row.sha256)


async def test_latest_edition_keeps_one_edition(site: Site, ws: Path) -> None:
    urls = [site.base + R04 + "index.html", site.base + R05 + "index.html"]
    got = await cli("collect", "html", str(ws), *urls, "--latest-edition", "--profile", "soumu", *FAST)
    assert got["editions"] == [site.base + "/johotsusintokei/whitepaper/ja/r05/"]
    (left,) = got["left_out_editions"]
    assert left["scope"] == site.base + "/johotsusintokei/whitepaper/ja/r04/"
    assert "r05 (2023)" in left["reason"]
    assert not any(p.startswith("/johotsusintokei/whitepaper/ja/r04/") for p in site.requests)
    # asked later on its own, the older edition is still left out: the workspace holds a later one
    older = await cli("collect", "html", str(ws), site.base + R04 + "index.html", "--latest-edition",
                      "--profile", "soumu", *FAST)
    assert older["editions"] == [] and len(older["left_out_editions"]) == 1
    assert not any(p.startswith("/johotsusintokei/whitepaper/ja/r04/") for p in site.requests)


async def test_unknown_profile_is_one_line(site: Site, ws: Path) -> None:
    proc = await asyncio.to_thread(run_cli, "collect", "html", str(ws), site.base + R05 + "index.html",
                                   "--profile", "meti", check=False)
    assert proc.returncode == 1
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "unknown site profile 'meti'" in lines[0]
    assert "cao, generic, mlit, mod, soumu" in lines[0]
    assert sum(site.requests.values()) == 0


def test_no_server_is_a_clear_error(ws: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/report/2024/index.html"
    proc = run_cli("collect", "html", str(ws), url, *FAST, check=False)
    assert proc.returncode == 1
    assert f"nothing collected from {url}: cannot read http://127.0.0.1:{port}/robots.txt: connection error" \
        in proc.stderr
    status = run_cli_json("status", str(ws))
    assert status["figures"] == 0 and status["stages"]["collect"]["errors"] == 1


def test_bad_start_url(ws: Path) -> None:
    proc = run_cli("collect", "html", str(ws), "ftp://example.org/index.html", check=False)
    assert proc.returncode == 1 and "start URL 'ftp://example.org/index.html': unsupported URL scheme" in proc.stderr



async def test_figure_list_back_data_reaches_the_workspace(site: Site, ws: Path) -> None:
    got = await cli("collect", "html", str(ws), site.base + "/hakusho_data/2023/html/zuhyo.html", "--profile", "mod",
                    *FAST)
    assert got["figures"] == 3
    figures = {f["figure_number"]: f for f in run_cli_json("figures", str(ws))["figures"]}
    assert sorted(figures) == ["図表I-2-1-1", "図表I-2-1-2", "図表I-3-1"]
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.tables import FigureRow

    with Workspace.open(ws) as w, w.db.read() as s:
        rows = {r.figure_number: r for r in s.query(FigureRow)}
        assert rows["図表I-2-1-1"].back_data_url == site.base + "/hakusho_data/2023/csv/zuhyo01020101.csv"
        assert rows["図表I-2-1-2"].back_data_url is None and rows["図表I-2-1-1"].year == 2023


def _count_figures(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(con.execute("SELECT count(*) FROM figures").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


async def test_kill_9_mid_crawl_then_rerun_completes_exactly(site: Site, ws: Path) -> None:
    site.image_delay_s = 0.4
    url = site.base + REPORT + "index.html"
    proc = subprocess.Popen([sys.executable, "-m", "zuhyo", "collect", "html", str(ws), url, "--delay", "0",
                             "--concurrency", "1", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    db = ws / "zuhyo.db"
    deadline = time.monotonic() + 60
    while _count_figures(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    await asyncio.to_thread(proc.wait)
    done_before = _count_figures(db)
    assert proc.returncode == -signal.SIGKILL and 0 < done_before < 5, done_before
    fetched_before = {p: n for p, n in site.requests.items() if p.endswith(".png")}
    site.image_delay_s = 0.0
    again = await cli("collect", "html", str(ws), url, *FAST)
    assert again["errors"] == 0 and again["skipped_existing"] >= done_before
    assert again["figures"] + again["skipped_existing"] == 5
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT locator), count(DISTINCT sha256) FROM figures"
                           ).fetchone() == (5, 5, 5)
        recorded = {r[0].removeprefix(site.base) for r in con.execute("SELECT locator FROM figures")}
    finally:
        con.close()
    # at most the images in hand when it was killed are downloaded twice; the recorded ones never again
    twice = {p for p, n in site.requests.items() if p.endswith(".png") and n > 1}
    assert len(twice) <= len(fetched_before) - done_before
    assert len(recorded) == 5


async def test_polite_fetcher_refuses_redirects_into_private_addresses(tmp_path: Path) -> None:
    from zuhyo.images.fetch import PageFetchError, PoliteFetcher

    async def redirect(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(f"http://127.0.0.2:{request.url.port}/inside")

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", redirect)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/start"
    try:
        async with PoliteFetcher(delay_s=0, retries=0) as fetcher:
            with pytest.raises(PageFetchError, match="127.0.0.2 is a loopback address .pass --allow-private-hosts"):
                await fetcher.get(url)
        for options in ({"allow_private_hosts": True}, {"is_public": lambda ip: True}):
            async with PoliteFetcher(delay_s=0, retries=0, **options) as fetcher:  # type: ignore[arg-type]
                with pytest.raises(PageFetchError) as info:  # followed: nothing listens on 127.0.0.2 there
                    await fetcher.get(url)
                assert "loopback address" not in info.value.message
    finally:
        await runner.cleanup()


async def test_corrupt_and_huge_images_are_errors_with_reasons(site: Site, ws: Path) -> None:
    import io
    import struct
    import zlib

    from PIL import Image

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    bad = site.root / "bad" / "2024"
    bad.mkdir(parents=True)
    (bad / "bomb.png").write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 40000, 40000, 8, 2,
                                   0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b""))
    buf = io.BytesIO()
    Image.new("RGB", (200, 100), (10, 20, 30)).save(buf, "JPEG")
    (bad / "cut.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    write_png(bad / "good.png", 3)
    (bad / "index.html").write_text(
        "<html><body><main><h1>Report 2024</h1><p>図1　良い</p><img src='good.png'>"
        "<p>図2　巨大</p><img src='bomb.png'><p>図3　破損</p><img src='cut.jpg'></main></body></html>",
        encoding="utf-8")
    got = await cli("collect", "html", str(ws), site.base + "/bad/2024/index.html", *FAST)
    assert got["figures"] == 1 and got["errors"] == 2
    reasons = {e["url"].rsplit("/", 1)[1]: e["reason"] for e in got["error_items"]}
    assert "bomb.png" in reasons and "1,600,000,000 pixels" in reasons["bomb.png"], reasons
    assert "cut.jpg" in reasons and ("truncated" in reasons["cut.jpg"] or "corrupt" in reasons["cut.jpg"]), reasons
    status = run_cli_json("status", str(ws))
    assert status["figures"] == 1 and status["stages"]["collect"]["errors"] == 2
