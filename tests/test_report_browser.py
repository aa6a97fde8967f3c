"""index.html in a real browser (Playwright driving Debian's Chromium): tables present, every image decoded,
the failed-items filter and pages reach every item, the layout fits a 1400 px window, and nothing is fetched from
outside the file. Screenshots of each section are written to ``$ZUHYO_SCREENSHOTS`` (default: the report's
``screenshots/`` folder) to be looked at."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import run_cli_json
from test_report_support import answer_key, eval_into, write_astro, write_hakusho

from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report_browser")
    hpath, hrows = write_hakusho(root / "data")
    apath, arows = write_astro(root / "data", copies=1)
    key = {**answer_key(hrows, "hakusho", lambda i: i % 3 != 0, lambda i: i % 2 == 0),
           **answer_key(arows, "astro", lambda i: i % 2 == 0, lambda i: True)}
    with FakeOpenAIServer(ServerState(answers=key)) as srv_a, FakeOpenAIServer(ServerState(answers={})) as srv_b:
        eval_into(root / "h", "hakusho", hpath, srv_a.base_url, "モデルA", "rules")
        eval_into(root / "h", "hakusho", hpath, srv_b.base_url, "always-unknown", "rules")
        eval_into(root / "a", "astrochart", apath, srv_a.base_url, "モデルA", "astrochart")
    out = root / "report"
    run_cli_json("report", str(root / "h"), str(root / "a"), "--out", str(out), "--bootstrap", "500")
    # The report must not depend on the run sets or the images on disk any more: move them away.
    shutil.rmtree(root / "data")
    return out


def test_report_opens_in_chromium_with_all_images_loaded(report_dir):
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (pip install playwright) is missing")
    external: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda req: external.append(req.url)
                    if not req.url.startswith(("file://", "data:")) else None)
            page.goto((report_dir / "index.html").as_uri())
            page.wait_for_load_state("load")
            tables = page.eval_on_selector_all("table.report-table", "ts => ts.map(t => t.dataset.name)")
            assert "main" in tables and "hakusho_image_type_direct" in tables
            assert "astrochart_domaincqa_direct" in tables and "astrochart_metrics" in tables
            main_text = page.inner_text("table[data-name=main]")
            assert "モデルA" in main_text and "always-unknown" in main_text and "hakusho" in main_text
            images = page.eval_on_selector_all(
                "img", "imgs => imgs.map(i => ({src: i.src.slice(0, 22), ok: i.complete && i.naturalWidth > 0}))")
            plots = [i for i in images if i["src"].startswith("data:image/png")]
            thumbs = [i for i in images if i["src"].startswith("data:image/jpeg")]
            assert len(plots) >= 6 and len(thumbs) > 10
            assert all(i["ok"] for i in images), [i for i in images if not i["ok"]][:3]
            # Client-side filter over every failed item-run, rendered a page at a time.
            data = page.evaluate("JSON.parse(document.getElementById('failed-data').textContent).rows")
            total = len(data)
            shown = "#failed tbody tr.failed-row"
            assert page.inner_text("#f-count") == f"{total} of {total} match"
            assert page.eval_on_selector_all(shown, "rs => rs.length") == min(50, total) < total
            first_page = page.eval_on_selector_all(shown, "rs => rs.map(r => r.dataset.bench)")
            assert {"hakusho", "astrochart"} <= set(first_page[:6])  # interleaved, not one benchmark first
            page.click("#f-next")
            assert page.inner_text("#f-page").startswith("page 2 of ")
            page.select_option("#f-kind", "incorrect")
            page.select_option("#f-bench", "hakusho")
            want = [r for r in data if r["kind"] == "incorrect" and r["bench"] == "hakusho"]
            assert 0 < len(want) < total
            assert page.inner_text("#f-count") == f"{len(want)} of {total} match"
            page.fill("#f-text", "問3番:")
            rows = page.eval_on_selector_all(shown, "rs => rs.map(r => r.innerText)")
            assert rows and all("問3番:" in r for r in rows)
            # The last item of the whole list is reachable by the filter (it was cut at 300 per model before).
            page.select_option("#f-kind", "")
            page.select_option("#f-bench", "")
            last = data[-1]
            page.fill("#f-text", f"{last['bench']}/{last['id']}")
            found = page.eval_on_selector_all(shown, "rs => rs.map(r => r.innerText)")
            assert any(f"{last['bench']}/{last['id']}" in r for r in found)
            assert all(r["reason"].strip() for r in data)
            page.fill("#f-text", "")
            # Layout at 1400 px: nothing widens the page; wide tables scroll inside their own box.
            page.set_viewport_size({"width": 1400, "height": 900})
            assert page.evaluate("document.documentElement.scrollWidth") <= 1400
            boxes = page.eval_on_selector_all(
                ".table-wrap", "ws => ws.map(w => ({client: w.clientWidth, scroll: w.scrollWidth}))")
            assert boxes and all(b["client"] <= 1400 for b in boxes)
            # Failed-items headers sit over their cells.
            heads = page.eval_on_selector_all("#failed thead th", "hs => hs.map(h => h.getBoundingClientRect().x)")
            cells = page.eval_on_selector_all(f"{shown}:first-child td",
                                              "cs => cs.map(c => c.getBoundingClientRect().x)")
            assert len(heads) == len(cells) == 6
            assert all(abs(h - c) < 1 for h, c in zip(heads, cells, strict=True)), (heads, cells)
            # Category plots are drawn by default (every category of this small set is under 50 items, greyed),
            # and the threshold note appears once per plot, in its caption.
            captions = page.eval_on_selector_all("#plots figcaption", "cs => cs.map(c => c.innerText)")
            image_type = [c for c in captions if c.startswith("hakusho: Image type")]
            assert image_type and all(c.count("Grey: fewer than 50 items") == 1 for c in image_type)
            assert not any("or more items" in c for c in captions)
            shots = Path(os.environ.get("ZUHYO_SCREENSHOTS", report_dir / "screenshots"))
            shots.mkdir(parents=True, exist_ok=True)
            for section in ("tables", "plots", "failures"):
                page.locator(f"#{section}").screenshot(path=str(shots / f"{section}.png"))
                assert (shots / f"{section}.png").stat().st_size > 10_000
        finally:
            browser.close()
    assert external == [], f"the report fetched external resources: {external[:5]}"
