"""The annotation web app over HTTP, in process (FastAPI TestClient): every route and permission, the security
properties (signed HttpOnly cookies, CSRF, login rate limit, escaping, the verifier never receiving the
reference), the three flows end to end, the language switch and the message catalogue."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
pytest.importorskip("argon2")

from conftest import FIXTURE_CHARTS, run_cli  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from postgres_cluster import PostgresCluster, postgres  # noqa: E402, F401 - the session fixture
from sqlalchemy import select  # noqa: E402

from zuhyo.annotate.app import create_app  # noqa: E402
from zuhyo.annotate.i18n import LOCALES, load_catalogue, missing_translations  # noqa: E402
from zuhyo.annotate.users import add_user  # noqa: E402
from zuhyo.annotate.web_context import AppSettings  # noqa: E402
from zuhyo.construct.qa.items import add_qa_item  # noqa: E402
from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.qa_tables import ErrorSampleRow, QAItemRow, UserRow  # noqa: E402
from zuhyo.construct.workspace.records import add_figure, get_or_create_document, get_or_create_source  # noqa: E402
from zuhyo.schema import Figure  # noqa: E402

PASSWORD = "correct horse 1"
#: A reference answer no page should ever show a verifier (and that appears nowhere else in the fixtures).
REFERENCE = "73.25"
CHARTS = ("energy_mix.png", "exports_by_product.png", "gdp_life_expectancy.png")


def make_workspace(root: Path, users: dict[str, list[str]], *, drafts: int = 0,
                   db_url: str | None = None) -> Workspace:
    """A workspace with three real chart PNGs in its store (two sources), the given users, and ``drafts``
    model-drafted QA items on the first figure (DomainCQA style, for expert review); SQLite unless ``db_url`` is
    given."""
    ws = Workspace.init(root, db_url=db_url)
    with ws.db.write() as s:
        for i, name in enumerate(CHARTS):
            sha, _ = ws.images.put((FIXTURE_CHARTS / name).read_bytes())
            src = get_or_create_source(s, "folder", f"source-{i % 2}", title=f"白書 {i % 2}")
            doc, _ = get_or_create_document(s, src.id, f"doc-{i}")
            fig = add_figure(s, doc.id, Figure(locator=name, sha256=sha, caption=f"図 {i + 1}: {name}",
                                               context=[f"本文の文脈 {i + 1}"], width=800, height=500,
                                               mime="image/png"))
            if i == 0:
                for n in range(drafts):
                    add_qa_item(s, item_key=f"draft/{fig.id}/astro/x/m/v1/{n}", figure_id=fig.id, origin="draft",
                                question=f"ドラフトの質問 {n}", answer=f"ドラフトの答え {n}", status="draft",
                                actor="zuhyo draft", style="astro", model="m", prompt_version="v1")
    for name, roles in users.items():
        add_user(ws.db, name, PASSWORD, roles)
    return ws


class Client:
    """A signed-in (or anonymous) person: a TestClient with its own cookie jar, reading CSRF tokens and submit
    keys from the pages it gets, and keeping every response body it received."""

    def __init__(self, app: Any, name: str | None = None) -> None:
        self.http = TestClient(app, raise_server_exceptions=True)
        self.seen: list[str] = []
        self.last = ""
        if name is not None:
            self.login(name)

    def get(self, url: str, **kw: Any) -> Any:
        r = self.http.get(url, **kw)
        self._keep(r)
        return r

    def _keep(self, r: Any) -> None:
        if r.headers.get("content-type", "").startswith(("text/", "application/json")):
            self.seen.append(r.text)
            if "csrf_token" in r.text:
                self.last = r.text

    def csrf(self) -> str:
        if "csrf_token" not in self.last:
            self.get("/login")
        m = re.search(r'name="csrf_token" value="([^"]+)"', self.last)
        assert m, self.last[:500]
        return m.group(1)

    def form_fields(self, form_id: str) -> dict[str, str]:
        """The hidden fields of the form with ``form_id`` on the last page (csrf_token, submit_key, ids)."""
        m = re.search(rf'<form[^>]*id="{form_id}".*?</form>', self.last, re.S)
        assert m, f"no form {form_id} on the page"
        return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', m.group(0)))

    def post(self, url: str, data: dict[str, Any], **kw: Any) -> Any:
        r = self.http.post(url, data=data, **kw)
        self._keep(r)
        return r

    def take(self, page: str) -> Any:
        """Open a task page; when it offers "take the next task" (no task held: a GET hands out none), press it."""
        r = self.get(page)
        if r.status_code == 200 and 'id="take-form"' in r.text:
            r = self.post(f"{page}/next", {"csrf_token": self.csrf()})
        return r

    def submit(self, page: str, form_id: str, action: str, **fields: Any) -> Any:
        """Open (take) ``page``, fill the form ``form_id`` and post it to ``action`` (following the redirect)."""
        r = self.take(page)
        assert r.status_code == 200, r.text[:500]
        return self.post(action, {**self.form_fields(form_id), **fields})

    def login(self, name: str, password: str = PASSWORD) -> Any:
        self.get("/login")
        r = self.post("/login", {"name": name, "password": password, "csrf_token": self.csrf()},
                      follow_redirects=False)
        if r.status_code == 303:
            self.get("/")  # the session (and so the CSRF token) is new after logging in
        return r


@pytest.fixture(scope="module")
def ws_template(tmp_path_factory) -> Path:
    """Built once (argon2 hashes are slow on purpose), copied for each test."""
    root = tmp_path_factory.mktemp("annotate") / "ws"
    make_workspace(root, {"alice": ["annotator"], "bob": ["annotator"], "carol": ["annotator"], "root": ["admin"],
                          "e1": ["expert"], "e2": ["expert"], "e3": ["expert"]}, drafts=1).close()
    return root


@pytest.fixture
def ws(ws_template: Path, tmp_path: Path):
    shutil.copytree(ws_template, tmp_path / "ws")
    w = Workspace.open(tmp_path / "ws")
    yield w
    w.close()


@pytest.fixture
def app(ws: Workspace):
    return create_app(ws, AppSettings(login_max_failures=3))


def _item(ws: Workspace, **where: Any) -> QAItemRow:
    with ws.db.read() as s:
        query = select(QAItemRow)
        for key, value in where.items():
            query = query.where(getattr(QAItemRow, key) == value)
        return s.scalars(query).one()


def _author(c: Client, question: str, answer: str, flags: tuple[str, ...] = ("Multi-hop",)) -> Any:
    r = c.take("/author")
    assert r.status_code == 200 and 'id="author-form"' in r.text
    return c.post("/author", {**c.form_fields("author-form"), "question": question, "answer": answer,
                              "difficulty": list(flags)})


# --- basics ----------------------------------------------------------------------------------------------------


def test_healthz_and_unknown_paths(app):
    c = TestClient(app)
    r = c.get("/healthz")
    assert r.status_code == 200 and r.json() == {"ok": True}
    r = c.get("/no/such/page")
    assert r.status_code == 404 and "見つかりません" in r.text
    assert c.get("/api/nothing").json() == {"error": "Not Found"}


def test_catalogue_every_key_has_japanese_and_english_and_templates_use_only_known_keys():
    catalogue = load_catalogue()
    assert LOCALES == ("ja", "en") and len(catalogue) > 100
    assert missing_translations(catalogue) == []
    assert missing_translations(load_catalogue('[a]\nb = { ja = "x" }\n')) == ["a.b (en)"]
    templates = Path(__file__).resolve().parents[1] / "src" / "zuhyo" / "annotate" / "templates"
    used = {k for p in templates.glob("*.html") for k in re.findall(r'\bt\("([a-z_]+\.[A-Za-z_ -]+)"\s*[,)]',
                                                                     p.read_text(encoding="utf-8"))}
    assert len(used) > 60 and sorted(used - set(catalogue)) == []


def test_secret_is_made_once_in_the_workspace_and_sessions_survive_a_restart(ws: Workspace):
    a = Client(create_app(ws), "alice")
    secret = (ws.root / ".serve-secret").read_text()
    assert (ws.root / ".serve-secret").stat().st_mode & 0o077 == 0
    cookie = a.http.cookies["zuhyo_session"]
    restarted = TestClient(create_app(ws))  # a new app on the same workspace: same secret, same signatures
    restarted.cookies.set("zuhyo_session", cookie)
    assert restarted.get("/", follow_redirects=False).status_code == 200
    assert (ws.root / ".serve-secret").read_text() == secret


# --- login, logout, cookies, CSRF, rate limit --------------------------------------------------------------------


def test_login_sets_a_signed_httponly_samesite_cookie_and_logout_ends_the_session(app):
    c = Client(app)
    assert c.get("/", follow_redirects=False).headers["location"] == "/login"
    r = c.login("alice")
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie
    home = c.get("/")
    assert home.status_code == 200 and "alice" in home.text and 'id="task-author"' in home.text
    assert "default-src 'self'" in home.headers["content-security-policy"]
    r = c.post("/logout", {"csrf_token": c.csrf()}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login?bye=1"
    assert c.get("/", follow_redirects=False).status_code == 303
    # A forged cookie (someone else's user id, no valid signature) is ignored.
    forged = TestClient(app)
    forged.cookies.set("zuhyo_session", c.http.cookies["zuhyo_session"].replace("a", "b", 1) + "x")
    assert forged.get("/", follow_redirects=False).headers["location"] == "/login"


def test_wrong_password_is_refused(app):
    c = Client(app)
    r = c.login("alice", "wrong password")
    assert r.status_code == 401 and ("ユーザー名またはパスワードが違います" in r.text)
    assert c.get("/", follow_redirects=False).status_code == 303


def test_csrf_token_is_required_on_every_form_and_the_json_api(app, ws):
    anon = Client(app)
    anon.get("/login")
    r = anon.post("/login", {"name": "alice", "password": PASSWORD})
    assert r.status_code == 403
    r = anon.post("/login", {"name": "alice", "password": PASSWORD, "csrf_token": "0" * 64})
    assert r.status_code == 403
    alice = Client(app, "alice")
    fields = (alice.take("/author"), alice.form_fields("author-form"))[1]
    for bad in ("", "x" * 64):
        r = alice.post("/author", {**fields, "csrf_token": bad, "question": "Q?", "answer": "1",
                                   "difficulty": "Global"})
        assert r.status_code == 403
    assert _count_items(ws, origin="human") == 0
    # Another session's token is not this session's.
    other = Client(app, "bob")
    r = alice.post("/author", {**fields, "csrf_token": other.csrf(), "question": "Q?", "answer": "1",
                               "difficulty": "Global"})
    assert r.status_code == 403
    assert alice.post("/logout", {}).status_code == 403
    assert alice.post("/locale", {"locale": "en"}).status_code == 403
    assert alice.http.post("/api/verify", json={"assignment_id": 1, "answer": "x",
                                                "submit_key": "00000000-0000-4000-8000-000000000000"}
                           ).status_code == 403


def test_login_is_rate_limited_after_repeated_failures(app):
    c = Client(app)
    for _ in range(3):
        assert c.login("alice", "nope").status_code == 401
    r = c.login("alice")  # even the right password waits now
    assert r.status_code == 429 and "秒後にもう一度" in r.text
    assert c.get("/", follow_redirects=False).status_code == 303
    # Another name from the same address is not locked by alice's failures ...
    assert Client(app).login("bob").status_code == 303
    # ... until the address has failed four times a name's limit (a scan of names from one address).
    for n in range(9):
        assert Client(app).login(f"nobody{n}", "x").status_code == 401
    assert Client(app).login("carol").status_code == 429


def test_login_limit_lets_people_in_again_after_the_window():
    from zuhyo.annotate.auth import LoginLimiter

    now = [1000.0]
    limiter = LoginLimiter(max_failures=2, window_s=60, address_factor=2, clock=lambda: now[0])
    limiter.failed("a", "10.0.0.1")
    assert limiter.blocked("a", "10.0.0.1") == 0
    limiter.failed("A", "10.0.0.1")  # names are compared case-folded
    assert limiter.blocked("a", "10.0.0.2") == pytest.approx(60)
    assert limiter.blocked("b", "10.0.0.1") == 0
    now[0] += 10
    limiter.failed("b", "10.0.0.1")
    limiter.failed("c", "10.0.0.1")
    assert limiter.blocked("d", "10.0.0.1") == pytest.approx(50)  # the address: 4 failures in the window
    now[0] += 51
    assert limiter.blocked("a", "10.0.0.1") == 0 and limiter.blocked("d", "10.0.0.1") == 0
    limiter.failed("e", "10.0.0.3")
    limiter.failed("e", "10.0.0.3")
    limiter.succeeded("e")
    assert limiter.blocked("e", "10.0.0.4") == 0


# --- permissions -------------------------------------------------------------------------------------------------


ADMIN_PAGES = ("/dashboard", "/admin/users")


def test_annotator_and_expert_cannot_open_admin_pages_and_anonymous_is_sent_to_login(app, ws):
    for name in ("alice", "e1"):
        c = Client(app, name)
        for page in ADMIN_PAGES:
            r = c.get(page)
            assert r.status_code == 403 and "権限がありません" in r.text, (name, page)
        r = c.post("/admin/users", {"csrf_token": c.csrf(), "name": "mallory", "password": "x" * 12,
                                    "roles": "admin"})
        assert r.status_code == 403
        r = c.post("/admin/users/1", {"csrf_token": c.csrf(), "roles": ["admin", "annotator"], "active": "1"})
        assert r.status_code == 403
    with ws.db.read() as s:
        assert s.scalars(select(UserRow).where(UserRow.name == "mallory")).first() is None
        assert s.scalars(select(UserRow).where(UserRow.name == "alice")).one().roles == ["annotator"]
    expert = Client(app, "e1")
    for page in ("/author", "/verify", "/revise", "/api/verify/current"):
        assert expert.get(page).status_code == 403, page
    annotator = Client(app, "alice")
    assert annotator.take("/review").status_code == 403
    anon = TestClient(app)
    for page in ("/", "/author", "/verify", "/review", "/errors", "/revise", *ADMIN_PAGES):
        r = anon.get(page, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login", page
    assert anon.get("/api/verify/current").status_code == 401


def test_admin_adds_a_user_and_changes_roles_on_the_users_page(app, ws):
    root = Client(app, "root")
    page = root.get("/admin/users")
    assert page.status_code == 200 and 'data-user="alice"' in page.text
    r = root.post("/admin/users", {"csrf_token": root.csrf(), "name": "dave", "display_name": "<b>Dave</b>",
                                   "password": "a long password", "roles": ["annotator", "expert"], "locale": "en"})
    assert r.status_code == 200 and "ユーザー dave を追加しました" in r.text
    assert "<b>Dave</b>" not in r.text and "&lt;b&gt;Dave&lt;/b&gt;" in r.text
    dave = Client(app, "dave")
    assert dave.take("/review").status_code == 200
    uid = _user_id(ws, "dave")
    r = root.post(f"/admin/users/{uid}", {"csrf_token": root.csrf(), "roles": ["annotator"], "active": "0"})
    assert r.status_code == 200 and "ユーザー dave を更新しました" in r.text
    assert dave.get("/", follow_redirects=False).status_code == 303  # deactivated: signed out
    assert Client(app).login("dave", "a long password").status_code == 401
    r = root.post("/admin/users", {"csrf_token": root.csrf(), "name": "dave", "password": "a long password",
                                   "roles": "annotator"})
    assert r.status_code == 400  # the name is taken: said on the page


def test_a_new_password_ends_the_older_sessions(app, ws):
    from zuhyo.annotate.users import set_password

    alice, again = Client(app, "alice"), Client(app, "alice")
    assert alice.get("/", follow_redirects=False).status_code == 200
    set_password(ws.db, "alice", "another password 2")
    for c in (alice, again):
        assert c.get("/", follow_redirects=False).headers["location"] == "/login"
    assert Client(app).login("alice", "another password 2").status_code == 303


# --- images ------------------------------------------------------------------------------------------------------


def test_images_come_from_the_store_with_their_content_type(app, ws):
    sha = next(sha for sha, _ in ws.images)
    alice = Client(app, "alice")
    r = alice.get(f"/images/{sha}")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png" and r.content[:4] == b"\x89PNG"
    assert alice.get("/images/" + "0" * 64).status_code == 404
    assert alice.get("/images/../zuhyo.toml").status_code == 404
    assert TestClient(app).get(f"/images/{sha}", follow_redirects=False).status_code == 303


# --- authoring → blind verification → accept / revise ----------------------------------------------------------


def test_author_then_blind_verify_match_is_accepted_and_the_verifier_never_gets_the_reference(app, ws):
    alice, bob = Client(app, "alice"), Client(app, "bob")
    page = alice.take("/author")
    assert "作問の要件" in page.text and 'src="/images/' in page.text and "図 " in page.text
    assert "本文の文脈" in page.text and "/static/viewer.js" in page.text
    assert all(f'value="{flag}"' in page.text for flag in ("Global", "Multi-hop", "Counting", "External knowledge",
                                                           "Visual", "Other"))
    r = _author(alice, "2020年の再生可能エネルギーの割合は何%か?", REFERENCE)
    assert r.status_code == 200 and "作問しました" in r.text
    item = _item(ws, origin="human")
    assert item.status == "authored" and item.answer == REFERENCE and item.difficulty == ["Multi-hop"]
    # The author cannot verify their own item: no task for them on it.
    own = alice.take("/verify")
    assert "2020年の再生可能エネルギー" not in own.text
    # The verifier: page and JSON API carry the question and image, never the reference.
    api = bob.http.post("/api/verify/next", headers={"X-CSRF-Token": bob.csrf()}).json()["task"]
    assert api["question"].startswith("2020年") and api["image"].startswith("/images/")
    assert set(api) == {"assignment_id", "qa_item_id", "round", "question", "image", "width", "height",
                        "expires_at"}
    page = bob.take("/verify")
    assert "2020年の再生可能エネルギー" in page.text and 'id="verify-form"' in page.text
    assert "図 " not in page.text and "本文の文脈" not in page.text  # blind: no caption or context either
    # alice tries to answer bob's assignment through the API: not hers, and answered as if it did not exist
    # (404, the same words), so ids do not tell whose work they are.
    r = alice.http.post("/api/verify", json={"assignment_id": api["assignment_id"], "answer": REFERENCE,
                                             "submit_key": "00000000-0000-4000-8000-000000000001"},
                        headers={"X-CSRF-Token": alice.csrf()})
    missing = alice.http.post("/api/verify", json={"assignment_id": 999_999, "answer": REFERENCE,
                                                   "submit_key": "00000000-0000-4000-8000-000000000002"},
                              headers={"X-CSRF-Token": alice.csrf()})
    assert r.status_code == missing.status_code == 404
    assert (r.json()["error"].replace(str(api["assignment_id"]), "N")
            == missing.json()["error"].replace("999999", "N"))
    r = bob.post("/verify", {**bob.form_fields("verify-form"), "answer": "73.25%"})
    assert r.status_code == 200 and "一致 — 受理されました" in r.text
    assert _item(ws, origin="human").status == "accepted"
    assert all(REFERENCE not in body for body in bob.seen), "the reference reached the verifier"
    assert len(bob.seen) >= 4


def test_mismatch_goes_back_to_the_author_who_revises_and_another_user_verifies_again(app, ws):
    alice, bob, carol = Client(app, "alice"), Client(app, "bob"), Client(app, "carol")
    _author(alice, "石油の割合は?", REFERENCE, ("Global", "Visual"))
    # bob answers through the JSON API (header CSRF token), wrongly.
    task = bob.http.post("/api/verify/next", headers={"X-CSRF-Token": bob.csrf()}).json()["task"]
    key = "3f0c1d52-6a7e-4b5b-9d55-0d8e7f6a5b41"
    body = {"assignment_id": task["assignment_id"], "answer": "12", "submit_key": key}
    r = bob.http.post("/api/verify", json=body, headers={"X-CSRF-Token": bob.csrf()})
    bob._keep(r)
    assert r.status_code == 200 and r.json()["outcome"] == "revise" and r.json()["replayed"] is False
    again = bob.http.post("/api/verify", json=body, headers={"X-CSRF-Token": bob.csrf()})
    bob._keep(again)
    assert again.json()["replayed"] is True and again.json()["outcome"] == "revise"
    assert all(REFERENCE not in b for b in bob.seen)
    item = _item(ws, origin="human")
    assert item.status == "revise"
    # bob cannot open alice's revision; carol neither.
    assert bob.get(f"/revise/{item.id}").status_code == 404
    listing = alice.get("/revise")
    assert f'href="/revise/{item.id}"' in listing.text
    page = alice.get(f"/revise/{item.id}")
    # The verifier's answer and the judge's verdict are shown to the author.
    assert page.status_code == 200 and ">12<" in page.text and 'class="tag mismatch">不一致<' in page.text
    r = alice.post(f"/revise/{item.id}", {**alice.form_fields("revise-form"), "question": "石油の割合は何%?",
                                         "answer": "12", "difficulty": ["Global"]})
    assert r.status_code == 200 and "修正しました" in r.text
    revised = _item(ws, origin="human")
    assert revised.status == "authored" and revised.revision == 2 and revised.answer == "12"
    # bob verified it already: the next verifier is someone else.
    assert "石油の割合" not in bob.take("/verify").text
    page = carol.take("/verify")
    assert "石油の割合は何%?" in page.text
    r = carol.post("/verify", {**carol.form_fields("verify-form"), "answer": "12"})
    assert "一致 — 受理されました" in r.text and _item(ws, origin="human").status == "accepted"


def test_author_can_discard_after_a_mismatch(app, ws):
    alice, bob = Client(app, "alice"), Client(app, "bob")
    _author(alice, "石炭の割合は何%?", "42%")
    bob.submit("/verify", "verify-form", "/verify", answer="17%")  # a decided mismatch: back to the author
    item = _item(ws, origin="human")
    alice.get(f"/revise/{item.id}")
    r = alice.post(f"/revise/{item.id}/discard", {**alice.form_fields("discard-form"), "reason": "曖昧"})
    assert r.status_code == 200 and "破棄しました" in r.text
    assert _item(ws, origin="human").status == "discarded"


def test_a_repeated_submit_key_stores_one_item(app, ws):
    alice = Client(app, "alice")
    alice.take("/author")
    fields = {**alice.form_fields("author-form"), "question": "何年か?", "answer": "2020", "difficulty": "Global"}
    first = alice.post("/author", fields, follow_redirects=False)
    second = alice.post("/author", fields, follow_redirects=False)
    assert first.status_code == second.status_code == 303
    assert first.headers["location"] == second.headers["location"] == "/author?done=authored"
    assert _count_items(ws, origin="human") == 1


def test_authoring_needs_a_flag_and_keeps_what_was_typed(app, ws):
    alice = Client(app, "alice")
    alice.take("/author")
    r = alice.post("/author", {**alice.form_fields("author-form"), "question": "書きかけの質問", "answer": "5"})
    assert r.status_code == 400 and 'id="form-error"' in r.text and "書きかけの質問" in r.text
    assert _count_items(ws, origin="human") == 0


def test_skip_with_a_reason_moves_on_to_another_image(app, ws):
    alice = Client(app, "alice")
    first = re.search(r'/images/([0-9a-f]{64})', alice.take("/author").text).group(1)
    r = alice.post("/author/skip", {**alice.form_fields("skip-form"), "reason": "unreadable", "note": "ぼやけている"})
    assert r.status_code == 200 and "スキップしました" in r.text
    second = re.search(r'/images/([0-9a-f]{64})', r.text).group(1)
    assert second != first
    skips = Client(app, "root").get("/dashboard").text
    assert re.search(r'id="skips".*判読できない.*ぼやけている', skips, re.S)


def test_user_text_is_html_escaped_everywhere_it_is_shown(app, ws):
    alice, bob = Client(app, "alice"), Client(app, "bob")
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    _author(alice, evil + " の値は?", "5")
    page = bob.take("/verify")
    assert "<script>alert" not in page.text and "<img src=x" not in page.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.text
    api = bob.http.post("/api/verify/next", headers={"X-CSRF-Token": bob.csrf()}).json()["task"]
    assert api["question"].startswith("<script>")  # JSON carries the text as it is; pages escape it


# --- expert review -----------------------------------------------------------------------------------------------


def test_experts_disagree_then_a_third_expert_decides_and_alpha_is_on_the_dashboard(app, ws):
    e1, e2, e3, root = Client(app, "e1"), Client(app, "e2"), Client(app, "e3"), Client(app, "root")
    page = e1.take("/review")
    assert "ドラフトの質問 0" in page.text and "ドラフトの答え 0" in page.text and "ラウンド 1" in page.text
    r = e1.post("/review", {**e1.form_fields("review-form"), "rating": "valid", "comment": "良い"})
    assert r.status_code == 200 and "レビュー中" in r.text
    e2.take("/review")
    r = e2.post("/review", {**e2.form_fields("review-form"), "rating": "flawed", "comment": "単位がない",
                            "correction_answer": "ドラフトの答え 0 %"})
    assert "意見が分かれたため次のラウンドへ" in r.text
    assert _item(ws, origin="draft").status == "reviewing"
    assert "ドラフトの質問" not in e1.take("/review").text  # e1 rated it already: not offered again
    page = e3.take("/review")
    assert "ラウンド 2" in page.text and "単位がない" not in page.text  # other experts' ratings are not shown
    r = e3.post("/review", {**e3.form_fields("review-form"), "rating": "valid"})
    assert _item(ws, origin="draft").status == "accepted"
    dash = root.get("/dashboard")
    assert dash.status_code == 200 and 'id="alpha-overall"' in dash.text and "Krippendorff" in dash.text
    assert re.search(r'id="alpha-overall">[-0-9.]+<', dash.text), "α is shown"


def test_audit_flags_show_on_the_review_page_and_an_expert_resolves_them(app, ws):
    from zuhyo.construct.workspace.qa_tables import QAFlag

    draft = _item(ws, origin="draft")
    with ws.db.write() as s:
        s.add(QAFlag(qa_item_id=draft.id, kind="text_only", fingerprint="f" * 16,
                     detail="<i>answered without the image</i> by 2 of 2 models", evidence={}, meta={}))
    e1 = Client(app, "e1")
    page = e1.take("/review")
    assert "画像なしで答えられる" in page.text and "&lt;i&gt;answered without the image&lt;/i&gt;" in page.text
    flag_id = int(re.search(r'action="/flags/(\d+)"', page.text).group(1))
    alice = Client(app, "alice")  # not the item's author, not an expert
    r = alice.post(f"/flags/{flag_id}", {"csrf_token": alice.csrf(), "status": "resolved", "resolution": "x"})
    assert r.status_code == 403
    r = e1.post(f"/flags/{flag_id}", {"csrf_token": e1.csrf(), "status": "dismissed", "resolution": "画像が必要"},
                headers={"referer": "http://testserver/review"})
    assert r.status_code == 200 and r.url.path == "/review" and "画像なしで答えられる" not in r.text
    with ws.db.read() as s:
        flag = s.get(QAFlag, flag_id)
        assert flag is not None and flag.status == "dismissed" and flag.resolution == "画像が必要"
    r = e1.post(f"/flags/{flag_id}", {"csrf_token": e1.csrf(), "status": "resolved", "resolution": "again"})
    assert r.status_code == 409


def test_review_rating_must_be_valid_or_flawed(app, ws):
    e1 = Client(app, "e1")
    e1.take("/review")
    r = e1.post("/review", {**e1.form_fields("review-form"), "rating": "maybe"})
    assert r.status_code == 400
    assert _item(ws, origin="draft").status in ("draft", "reviewing")


# --- error analysis ----------------------------------------------------------------------------------------------


def test_error_analysis_page_tags_a_wrong_answer(app, ws):
    sha, path = next(iter(ws.images))
    with ws.db.write() as s:
        s.add(ErrorSampleRow(run_set="runs/a", model="openai:m@x", sample_key="b/1/direct/0", payload={
            "question": "最大の品目は?", "references": ["自動車"], "prediction": "<b>鉄鋼</b>",
            "image": {"path": str(path), "sha256": sha}}, meta={}))
    alice = Client(app, "alice")
    page = alice.take("/errors")
    assert page.status_code == 200 and "最大の品目は?" in page.text and "自動車" in page.text
    assert "&lt;b&gt;鉄鋼&lt;/b&gt;" in page.text and 'value="perception"' in page.text
    sample_id = int(re.search(r'/errors/(\d+)/image', page.text).group(1))
    img = alice.get(f"/errors/{sample_id}/image")
    assert img.status_code == 200 and img.headers["content-type"] == "image/png"
    r = alice.post("/errors", {**alice.form_fields("errors-form"), "error_type": "perception", "note": "読み違い"})
    assert r.status_code == 200 and "タグを付けました" in r.text
    dash = Client(app, "root").get("/dashboard")
    assert 'id="error-types"' in dash.text and "知覚" in dash.text


def test_the_flows_over_http_on_postgresql(postgres: PostgresCluster, tmp_path: Path):  # noqa: F811
    ws = make_workspace(tmp_path / "ws", {"alice": ["annotator"], "bob": ["annotator"], "e1": ["expert"],
                                          "e2": ["expert"], "root": ["admin"]}, drafts=1,
                        db_url=postgres.create_database("zuhyo_annotate_app"))
    try:
        assert ws.db.backend == "postgresql"
        app = create_app(ws)
        alice, bob, e1, e2 = (Client(app, n) for n in ("alice", "bob", "e1", "e2"))
        _author(alice, "ガスの割合は?", REFERENCE)
        bob.submit("/verify", "verify-form", "/verify", answer=REFERENCE)
        assert _item(ws, origin="human").status == "accepted"
        assert all(REFERENCE not in body for body in bob.seen)
        for expert, rating in ((e1, "valid"), (e2, "valid")):
            expert.submit("/review", "review-form", "/review", rating=rating)
        assert _item(ws, origin="draft").status == "accepted"
        dash = Client(app, "root").get("/dashboard")
        assert dash.status_code == 200 and 'id="alpha-overall"' in dash.text
    finally:
        ws.close()


# --- language ----------------------------------------------------------------------------------------------------


def test_language_switch_is_stored_per_user_and_japanese_is_the_default(app, ws):
    anon = Client(app)
    page = anon.get("/login")
    assert '<html lang="ja">' in page.text and "ログイン" in page.text
    r = anon.post("/locale", {"locale": "en", "csrf_token": anon.csrf()})
    assert '<html lang="en">' in r.text and "Log in" in r.text
    alice = Client(app, "alice")
    assert "わたしのタスク" in alice.get("/").text
    alice.take("/author")
    r = alice.post("/locale", {"locale": "en", "csrf_token": alice.csrf()},
                   headers={"referer": "http://testserver/author"})
    assert r.url.path == "/author" and "Requirements (HakushoBench §3.2)" in r.text
    with ws.db.read() as s:
        assert s.scalars(select(UserRow.locale).where(UserRow.name == "alice")).one() == "en"
    again = Client(app, "alice")  # another browser: the language follows the user
    assert "My tasks" in again.get("/").text
    assert alice.post("/locale", {"locale": "fr", "csrf_token": alice.csrf()}).status_code == 400
    r = alice.post("/locale", {"locale": "ja", "csrf_token": alice.csrf()},
                   headers={"referer": "http://evil.example/phish"})
    assert r.url.path == "/" and r.url.host == "testserver"  # never an open redirect


def test_serve_refuses_runs_without_a_model_and_a_folder_that_is_no_workspace(tmp_path: Path):
    proc = run_cli("serve", str(tmp_path), "--runs", str(tmp_path), check=False)
    assert proc.returncode == 1 and "--runs needs --runs-model" in proc.stdout + proc.stderr
    proc = run_cli("serve", str(tmp_path / "nowhere"), check=False)
    assert proc.returncode == 1 and "is not a zuhyo workspace" in proc.stdout + proc.stderr


def _count_items(ws: Workspace, **where: Any) -> int:
    with ws.db.read() as s:
        query = select(QAItemRow)
        for key, value in where.items():
            query = query.where(getattr(QAItemRow, key) == value)
        return len(s.scalars(query).all())


def _user_id(ws: Workspace, name: str) -> int:
    with ws.db.read() as s:
        return s.scalars(select(UserRow.id).where(UserRow.name == name)).one()


def test_the_dashboard_says_none_yet_before_any_verification(app):
    """Before anyone has verified, the match rate is 'none yet', not Python's None (issue 23)."""
    dash = Client(app, "root").get("/dashboard")
    rates = dash.text.split('id="rates"', 1)[1].split("</div>", 1)[0]
    assert dash.status_code == 200 and "検証の一致率" in rates
    assert "None" not in rates and "まだありません" in rates
