"""index.html in a real browser (Playwright driving Debian's Chromium): tables present, every image decoded,
the failed-items filter works, and nothing is fetched from outside the file."""

from __future__ import annotations

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
    run_cli_json("report", str(root / "h"), str(root / "a"), "--out", str(out), "--bootstrap", "500",
                 "--min-category-items", "10")
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
            # Client-side filter: model + kind select, then free text.
            total = page.eval_on_selector_all("#failed tr.failed-row", "rs => rs.length")
            page.select_option("#f-kind", "incorrect")
            page.select_option("#f-bench", "hakusho")
            visible = page.eval_on_selector_all(
                "#failed tr.failed-row", "rs => rs.filter(r => r.style.display !== 'none').length")
            assert 0 < visible < total
            assert page.inner_text("#f-count") == f"{visible} of {total} shown"
            page.fill("#f-text", "問3番:")
            rows = page.eval_on_selector_all(
                "#failed tr.failed-row", "rs => rs.filter(r => r.style.display !== 'none').map(r => r.innerText)")
            assert rows and all("問3番:" in r for r in rows)
        finally:
            browser.close()
    assert external == [], f"the report fetched external resources: {external[:5]}"
