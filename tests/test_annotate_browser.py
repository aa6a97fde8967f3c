"""The annotation app in a real browser (Playwright driving Debian's Chromium) against `zuhyo serve` on
127.0.0.1: author → blind verify → accept, mismatch → revise → re-verify, expert → disagreement → consensus, and
zoom/pan, keyboard shortcuts and the language switch. Screenshots of every page, in Japanese and in English, are
written to ``$ZUHYO_SCREENSHOTS`` (default: a temporary folder the test prints) to be looked at."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from serve_support import serving  # noqa: E402
from sqlalchemy import select  # noqa: E402
from test_annotate_app import PASSWORD, make_workspace  # noqa: E402
from test_report_support import answer_key, eval_into, write_hakusho  # noqa: E402

from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.qa_tables import QAFlag, QAItemRow  # noqa: E402
from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """`zuhyo serve --runs` on a workspace with three charts, a drafted QA item with an audit flag, seven people,
    and three wrong answers of a real run set loaded for error analysis."""
    root = tmp_path_factory.mktemp("annotate_browser") / "ws"
    ws = make_workspace(root, {"alice": ["annotator"], "bob": ["annotator"], "carol": ["annotator"],
                               "root": ["admin", "annotator"], "e1": ["expert"], "e2": ["expert"],
                               "e3": ["expert"]}, drafts=1)
    with ws.db.write() as s:
        draft = s.scalars(select(QAItemRow).where(QAItemRow.origin == "draft")).one()
        s.add(QAFlag(qa_item_id=draft.id, kind="reference_doubt", fingerprint="b" * 16, evidence={}, meta={},
                     detail="2 of 2 models reading the chart answered 34%, not the reference"))
    ws.close()
    # A real run set (a fake OpenAI-compatible server answering a fifth of the questions wrongly) whose wrong
    # answers `zuhyo serve --runs` loads for error analysis.
    data_root = root.parent / "runs"
    data, rows = write_hakusho(data_root / "data")
    srv = FakeOpenAIServer(ServerState(answers=answer_key(rows, "hakusho", lambda i: i % 5 != 1,
                                                          lambda i: True))).start()
    try:
        eval_into(data_root / "set", "hakusho", data, srv.base_url, "err-model", "rules")
    finally:
        srv.stop()
    with serving(root, "--runs", str(data_root / "set"), "--runs-model", "err-model", "--runs-sample", "3") as base:
        yield base, root


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("ZUHYO_SCREENSHOTS") or tmp_path_factory.mktemp("annotate_screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nannotation app screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (pip install playwright) is missing")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Person:
    """One person in their own browser context (own cookies), logged in."""

    def __init__(self, browser: Any, base: str, name: str, shots: Path) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="ja-JP")
        self.page = self.context.new_page()
        self.base, self.name, self.shots = base, name, shots
        self.outside: list[str] = []
        self.page.on("request", lambda req: self.outside.append(req.url)
                     if not req.url.startswith(base) else None)
        self.page.goto(base + "/login")
        self.page.fill("#name", name)
        self.page.fill("#password", PASSWORD)
        self.page.click("form[action='/login'] button")
        self.page.wait_for_url(base + "/")

    def go(self, path: str) -> Any:
        """Open a page; a task page without a held task offers "take the next task" (a GET hands out no work):
        press it, as a person would."""
        self.page.goto(self.base + path)
        if self.page.locator("#take-form").count():
            with self.page.expect_navigation():
                self.page.click("#take")
        return self.page

    def start(self, step: str) -> Any:
        """Press Start on the home page's card of ``step`` (a POST that takes the held or next task)."""
        self.page.goto(self.base + "/")
        with self.page.expect_navigation():
            self.page.click(f"#task-{step} button")
        return self.page

    def shot(self, label: str, both_languages: bool = True) -> None:
        """Screenshot the page (full page) in the current language, then in the other one, and back."""
        lang = self.page.get_attribute("html", "lang")
        self.page.screenshot(path=str(self.shots / f"{label}-{lang}.png"), full_page=True)
        if both_languages:
            self.switch_language()
            other = self.page.get_attribute("html", "lang")
            assert other != lang
            self.page.screenshot(path=str(self.shots / f"{label}-{other}.png"), full_page=True)
            self.switch_language()
            assert self.page.get_attribute("html", "lang") == lang

    def switch_language(self) -> None:
        with self.page.expect_navigation():
            self.page.click("#lang-switch")

    def text(self, selector: str = "main") -> str:
        return str(self.page.inner_text(selector))

    def close(self) -> None:
        assert self.outside == [], f"{self.name}'s pages fetched from elsewhere: {self.outside[:3]}"
        self.context.close()


def _item(root: Path, question_part: str) -> QAItemRow:
    with Workspace.open(root) as ws, ws.db.read() as s:
        return s.scalars(select(QAItemRow).where(QAItemRow.question.contains(question_part))).one()


def _image_ok(page: Any) -> bool:
    return bool(page.evaluate("() => { const i = document.querySelector('.viewer img');"
                              " return !!i && i.complete && i.naturalWidth > 0; }"))


def test_author_blind_verify_accept_then_mismatch_revise_reverify(server, browser, shots):
    base, root = server
    alice = Person(browser, base, "alice", shots)
    alice.shot("home-annotator")
    page = alice.start("author")  # Start on the home page takes an image (a POST) and opens it
    page.wait_for_load_state("load")
    assert page.url == base + "/author"
    assert _image_ok(page)
    assert "作問の要件" in alice.text() and "キャプション" in alice.text()
    # Zoom and pan: the wheel scales the image, a drag moves it, 0 fits it again.
    before = page.get_attribute(".viewer img", "style") or ""
    box = page.locator("#viewer").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -400)
    page.wait_for_timeout(100)
    zoomed = page.get_attribute(".viewer img", "style") or ""
    assert zoomed != before and "scale(" in zoomed
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 120, box["y"] + box["height"] / 2 + 60)
    page.mouse.up()
    assert (page.get_attribute(".viewer img", "style") or "") != zoomed
    page.click("[data-zoom=fit]")
    alice.shot("author")
    # Keyboard: q focuses the question, Alt+2 ticks the second flag (Multi-hop), Ctrl+Enter submits.
    page.click("h1")
    page.keyboard.press("q")
    page.keyboard.type("2020年の再生可能エネルギーの割合は何%か?")
    page.fill("#answer", "73.25")
    page.keyboard.press("Alt+2")
    assert page.is_checked("input[name=difficulty][value=Multi-hop]")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert "作問しました" in alice.text()
    first = _item(root, "再生可能エネルギー")
    assert first.status == "authored" and first.difficulty == ["Multi-hop"]

    bob = Person(browser, base, "bob", shots)
    page = bob.go("/verify")
    assert _image_ok(page)
    body = page.content()
    assert "再生可能エネルギー" in body and "73.25" not in body and "キャプション" not in body
    bob.shot("verify")
    page.fill("#answer", "73.25%")
    with page.expect_navigation():
        page.click("#submit")
    assert "一致 — 受理されました" in bob.text()
    assert _item(root, "再生可能エネルギー").status == "accepted"

    # Mismatch → revise → another verifier.
    page = alice.go("/author")
    page.fill("#question", "石炭の割合は何%か?")
    page.fill("#answer", "31%")
    page.check("input[name=difficulty][value=Global]")
    with page.expect_navigation():
        page.click("#submit")
    page = bob.go("/verify")
    assert "石炭の割合" in bob.text() and "31%" not in page.content()
    page.fill("#answer", "13")
    with page.expect_navigation():
        page.click("#submit")
    assert "不一致" in bob.text()
    item = _item(root, "石炭の割合")
    assert item.status == "revise"
    page = alice.go("/revise")
    alice.shot("revise-list")
    with page.expect_navigation():
        page.click(f"a[href='/revise/{item.id}']")
    assert "13" in alice.text("#verifications")
    alice.shot("revise")
    page.fill("#question", "2020年の石炭の割合は何%か?")
    with page.expect_navigation():
        page.click("#submit")
    assert "修正しました" in alice.text()
    page = bob.go("/verify")
    assert "石炭" not in bob.text()  # bob answered it already
    carol = Person(browser, base, "carol", shots)
    page = carol.go("/verify")
    assert "2020年の石炭の割合" in carol.text()
    page.fill("#answer", "31 %")
    with page.expect_navigation():
        page.click("#submit")
    assert "一致 — 受理されました" in carol.text()
    assert _item(root, "石炭の割合").status == "accepted"
    for p in (alice, bob, carol):
        p.close()


def test_expert_disagreement_then_consensus_and_the_admin_pages(server, browser, shots):
    base, root = server
    e1, e2, e3 = (Person(browser, base, n, shots) for n in ("e1", "e2", "e3"))
    page = e1.go("/review")
    assert "ドラフトの質問 0" in e1.text() and _image_ok(page)
    assert "正解が疑わしい" in e1.text("#audit-flags")
    e1.shot("review")
    page.fill("#audit-flags input[name=resolution]", "34% が正しい。答えを直すべき")
    with page.expect_navigation():
        page.click("#audit-flags button[value=resolved]")
    assert page.locator("#audit-flags").count() == 0 and "ドラフトの質問 0" in e1.text()
    page.click("h1")
    page.keyboard.press("Alt+v")
    assert page.is_checked("#rating-valid")
    page.fill("#comment", "図から読み取れる")
    with page.expect_navigation():
        page.click("#submit")
    page = e2.go("/review")
    page.check("#rating-flawed")
    page.fill("#comment", "単位が書かれていない")
    page.click("#correction summary")
    page.fill("#correction_answer", "ドラフトの答え 0 (%)")
    with page.expect_navigation():
        page.click("#submit")
    assert "次のラウンド" in e2.text()
    page = e3.go("/review")
    assert "ラウンド 2" in e3.text() and "単位が書かれていない" not in page.content()
    page.check("#rating-valid")
    with page.expect_navigation():
        page.click("#submit")
    assert _item(root, "ドラフトの質問 0").status == "accepted"
    e1.go("/review")
    e1.shot("review-none")

    admin = Person(browser, base, "root", shots)
    admin.shot("home-admin")
    page = admin.go("/dashboard")
    assert re.search(r"[-0-9.]+", page.inner_text("#alpha-overall"))
    assert "受理" in admin.text("#stages")
    admin.shot("dashboard")
    admin.go("/admin/users")
    assert "e3" in admin.text("#users")
    admin.shot("users")
    page = admin.go("/errors")
    assert "グラフで最も大きい値は何万人か" in admin.text() and "9999" in admin.text("#prediction")
    assert _image_ok(page)
    admin.shot("errors")
    page.check("input[name=error_type][value=perception]")
    page.fill("#note", "棒の長さを読み違えた")
    with page.expect_navigation():
        page.click("#submit")
    assert "タグを付けました" in admin.text()
    page = e1.go("/dashboard")
    assert "権限がありません" in e1.text()
    e1.shot("forbidden", both_languages=False)
    for p in (e1, e2, e3, admin):
        p.close()


def test_login_page_in_both_languages(server, browser, shots):
    base, _ = server
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(base + "/login")
    assert "ログイン" in page.inner_text("h1")
    page.fill("#name", "alice")
    page.fill("#password", "wrong password")
    page.click("form[action='/login'] button")
    assert "パスワードが違います" in page.inner_text("main")
    page.screenshot(path=str(shots / "login-ja.png"), full_page=True)
    with page.expect_navigation():
        page.click("#lang-switch")
    assert page.inner_text("h1") == "Log in"
    page.screenshot(path=str(shots / "login-en.png"), full_page=True)
    cookies = {c["name"]: c for c in context.cookies()}
    assert cookies["zuhyo_session"]["httpOnly"] and cookies["zuhyo_session"]["sameSite"] == "Lax"
    context.close()
