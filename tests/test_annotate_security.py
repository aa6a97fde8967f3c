"""The annotation app as a security reviewer probes it (issue 20): sessions that really end (logout, expiry,
password change, deactivation), the client address taken from the socket unless a proxy is trusted, images only
from the workspace store, others' assignments answered as missing, work handed out only on a POST, the CSP, and
people changing their own password. Every test here failed on the code before issue 20."""

from __future__ import annotations

import shutil
import urllib.error
import urllib.parse
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
pytest.importorskip("argon2")

import test_annotate_app  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from serve_support import serving  # noqa: E402
from sqlalchemy import func, select, update  # noqa: E402
from test_annotate_app import PASSWORD, Client  # noqa: E402

from zuhyo.annotate.auth import COOKIE_NAME  # noqa: E402
from zuhyo.annotate.users import activate, deactivate, set_password  # noqa: E402
from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.orm import utcnow  # noqa: E402
from zuhyo.construct.workspace.qa_tables import AssignmentRow, ErrorSampleRow, WebSessionRow  # noqa: E402

# The app tests' workspace (three charts, a draft, seven people), copied for each test.
ws_template, ws, app = test_annotate_app.ws_template, test_annotate_app.ws, test_annotate_app.app


def _replay(app: Any, cookie: str) -> TestClient:
    """Another browser holding a saved copy of the session cookie."""
    other = TestClient(app)
    other.cookies.set(COOKIE_NAME, cookie)
    return other


def _signed_in(c: TestClient) -> bool:
    r = c.get("/", follow_redirects=False)
    return r.status_code == 200 and "わたしのタスク" in r.text


def _assignments(ws: Workspace) -> int:
    with ws.db.read() as s:
        return int(s.scalar(select(func.count(AssignmentRow.id))) or 0)


# --- sessions end on the server ----------------------------------------------------------------------------------


def test_logout_ends_the_session_for_every_copy_of_the_cookie(app, ws):
    alice = Client(app, "alice")
    saved = alice.http.cookies[COOKIE_NAME]
    assert _signed_in(_replay(app, saved))  # a copy works while the session lives
    alice.post("/logout", {"csrf_token": alice.csrf()})
    copy = _replay(app, saved)
    assert not _signed_in(copy)  # old code: the saved cookie still worked for up to 12 hours
    assert copy.get("/api/verify/current").status_code == 401
    with ws.db.read() as s:
        row = s.scalars(select(WebSessionRow)).one()
        assert row.ended_reason == "logout" and row.ended_at is not None and len(row.id) == 64
        assert saved not in row.id  # only a digest of the session id is stored


def test_a_session_ends_at_its_expiry_on_the_server_whatever_the_cookie_says(app, ws):
    alice = Client(app, "alice")
    saved = alice.http.cookies[COOKIE_NAME]
    with ws.db.write() as s:
        s.execute(update(WebSessionRow).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert not _signed_in(_replay(app, saved))  # the cookie's own signature is still young
    assert not _signed_in(alice.http)


def test_a_password_change_and_a_deactivation_end_every_session(app, ws):
    first, second = Client(app, "alice"), Client(app, "alice")
    set_password(ws.db, "alice", "another long password")  # `zuhyo users passwd` does this
    assert not _signed_in(first.http) and not _signed_in(second.http)
    again = Client(app)
    assert again.login("alice", "another long password").status_code == 303 and _signed_in(again.http)
    deactivate(ws.db, "alice")
    activate(ws.db, "alice")
    assert not _signed_in(again.http)  # re-activating does not bring the old session back
    with ws.db.read() as s:
        reasons = sorted(r for r, in s.execute(select(WebSessionRow.ended_reason)))
    assert reasons == ["deactivated", "password", "password"]


def test_people_change_their_own_password_and_other_sessions_end(app, ws):
    alice, elsewhere = Client(app, "alice"), Client(app, "alice")
    page = alice.get("/account/password")
    assert page.status_code == 200 and 'id="password-form"' in page.text and 'href="/account/password"' in page.text
    form = {"csrf_token": alice.csrf(), "current": "wrong guess", "new": "a new long password",
            "repeat": "a new long password"}
    assert alice.post("/account/password", form).status_code == 401
    assert alice.post("/account/password", {**form, "current": PASSWORD, "repeat": "differs"}).status_code == 400
    assert alice.post("/account/password", {**form, "current": PASSWORD, "new": "short",
                                            "repeat": "short"}).status_code == 400
    assert alice.post("/account/password", {**form, "current": PASSWORD, "new": PASSWORD,
                                            "repeat": PASSWORD}).status_code == 400
    assert alice.http.post("/account/password", data={**form, "csrf_token": "forged"}).status_code == 403
    r = alice.post("/account/password", {**form, "current": PASSWORD, "csrf_token": alice.csrf()})
    assert r.status_code == 200 and "パスワードを変更しました" in r.text
    assert _signed_in(alice.http)  # this browser got a new session
    assert not _signed_in(elsewhere.http)  # the other one ended
    assert Client(app).login("alice", PASSWORD).status_code == 401
    assert Client(app).login("alice", "a new long password").status_code == 303
    assert TestClient(app).get("/account/password", follow_redirects=False).status_code == 303  # signed out: login


def test_wrong_current_passwords_meet_the_login_limit(app):
    alice = Client(app, "alice")
    form = {"current": "wrong guess", "new": "a new long password", "repeat": "a new long password"}
    codes = [alice.post("/account/password", {**form, "csrf_token": alice.csrf()}).status_code for _ in range(4)]
    assert codes == [401, 401, 401, 429]  # login_max_failures=3: a stolen session cannot guess the password


# --- the client address ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("trusted", [False, True], ids=["socket-peer", "trusted-proxy"])
def test_the_login_limit_uses_the_socket_address_unless_a_proxy_is_trusted(ws_template: Path, tmp_path: Path,
                                                                           trusted: bool):
    root = tmp_path / "ws"
    shutil.copytree(ws_template, root)
    args = ("--forwarded-allow-ips", "127.0.0.1") if trusted else ()
    with serving(root, *args) as base:
        codes = _failed_logins(base, 22)
    if trusted:  # each request seems to come from another client: no address reaches its limit
        assert 429 not in codes, codes
    else:  # old code: uvicorn trusted X-Forwarded-For from 127.0.0.1, so rotating it never triggered the limit
        assert codes[:20] == [401] * 20 and codes[20:] == [429, 429], codes


def _failed_logins(base: str, n: int) -> list[int]:
    """``n`` failed logins from one browser (its cookie and the login page's CSRF token), each under another
    name and another X-Forwarded-For address; their status codes."""
    import http.cookiejar
    import re

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(base + "/login", timeout=30) as r:
        token = re.search(r'name="csrf_token" value="([^"]+)"', r.read().decode()).group(1)
    codes = []
    for i in range(n):
        body = urllib.parse.urlencode({"name": f"nobody{i}", "password": "x" * 10, "csrf_token": token}).encode()
        req = urllib.request.Request(base + "/login", data=body, headers={"X-Forwarded-For": f"203.0.113.{i}"})
        try:
            with opener.open(req, timeout=30) as r:
                codes.append(r.status)
        except urllib.error.HTTPError as e:
            codes.append(e.code)
    return codes


# --- images only from the store ----------------------------------------------------------------------------------


def test_error_images_are_served_only_from_the_workspace_store(app, ws, tmp_path: Path):
    outside = tmp_path / "outside.png"
    sha, stored = next(iter(ws.images))
    outside.write_bytes(stored.read_bytes())
    with ws.db.write() as s:
        s.add(ErrorSampleRow(run_set=str(tmp_path), model="m", sample_key="b/1/direct/0", meta={},
                             payload={"question": "Q", "references": ["1"], "image": {"path": str(outside)}}))
        s.add(ErrorSampleRow(run_set=str(tmp_path), model="m", sample_key="b/2/direct/0", meta={},
                             payload={"question": "Q", "references": ["1"], "image": {"path": "/x", "sha256": sha}}))
        s.flush()
        ids = [r for r, in s.execute(select(ErrorSampleRow.id).order_by(ErrorSampleRow.id))]
    alice = Client(app, "alice")
    assert alice.get(f"/errors/{ids[0]}/image").status_code == 404  # old code: served the recorded path
    assert alice.get(f"/errors/{ids[1]}/image").status_code == 200  # by hash, from the store


def test_importing_error_samples_copies_images_and_refuses_non_images(ws, tmp_path: Path):
    from zuhyo.annotate.errors_analysis import _store_image

    png = tmp_path / "chart.png"
    png.write_bytes(next(iter(ws.images))[1].read_bytes())
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    good = {"benchmark": "b", "image": {"path": "chart.png"}}
    assert _store_image(good, ws.images, {"b": tmp_path}) is None
    assert ws.images.has(good["image"]["sha256"])
    bad = {"benchmark": "b", "image": {"path": str(secret)}}
    why = _store_image(bad, ws.images, {"b": tmp_path})
    assert why is not None and "not a PNG" in why and "root:" not in why and "sha256" not in bad["image"]
    gone = {"benchmark": "b", "image": {"path": "missing.png"}}
    assert "cannot be read" in (_store_image(gone, ws.images, {"b": tmp_path}) or "")
    assert "only by URL" in (_store_image({"image": {"url": "https://example.org/a.png"}}, ws.images, {}) or "")


# --- others' assignments, work on POST only ----------------------------------------------------------------------


def test_others_assignments_are_answered_as_missing_on_every_form(app, ws):
    alice, bob, e1, e2 = (Client(app, n) for n in ("alice", "bob", "e1", "e2"))
    page = alice.take("/author")
    held = int(alice.form_fields("author-form")["assignment_id"])
    e1.take("/review")
    review_id = int(e1.form_fields("review-form")["assignment_id"])
    bob.take("/author")
    bob_fields = bob.form_fields("author-form")
    question = {"question": "2020年の再生可能エネルギーの割合は何%か?", "answer": "12", "difficulty": "Multi-hop"}
    for client, url, fields, aid in ((bob, "/author", {**bob_fields, **question}, held),
                                     (bob, "/author/skip", {**bob_fields, "reason": "other"}, held),
                                     (e2, "/review", {"csrf_token": e2.csrf(), "rating": "valid",
                                                      "submit_key": "00000000-0000-4000-8000-00000000000a"},
                                      review_id)):
        theirs = client.post(url, {**fields, "assignment_id": str(aid)})
        none = client.post(url, {**fields, "assignment_id": "999999",
                                 "submit_key": "00000000-0000-4000-8000-00000000000b"})
        assert theirs.status_code == none.status_code == 404, (url, theirs.status_code)  # old code: 403
    assert page.status_code == 200


def test_get_hands_out_no_work_and_taking_it_is_a_checked_post(app, ws):
    alice, e1, root = Client(app, "alice"), Client(app, "e1"), Client(app, "root")
    for c, page in ((alice, "/author"), (alice, "/verify"), (e1, "/review"), (root, "/errors"),
                    (alice, "/api/verify/current"), (alice, "/")):
        r = c.get(page)
        assert r.status_code == 200, page
    assert _assignments(ws) == 0  # old code: every GET of a task page took an assignment
    assert 'id="take-form"' in alice.get("/author").text
    assert alice.http.post("/author/next", data={"csrf_token": "forged"}).status_code == 403
    assert alice.http.post("/api/verify/next").status_code == 403  # the JSON API needs the CSRF header
    assert alice.http.get("/api/verify/next").status_code == 405
    assert _assignments(ws) == 0
    r = alice.post("/author/next", {"csrf_token": alice.csrf()})
    assert r.status_code == 200 and r.url.path == "/author" and 'id="author-form"' in r.text
    assert _assignments(ws) == 1
    assert 'id="author-form"' in alice.get("/author").text and _assignments(ws) == 1  # the held one, no other
    home = alice.get("/")
    assert 'action="/author/next"' in home.text and 'href="/author"' not in home.text


def test_the_csp_limits_forms_and_base_urls(app):
    r = TestClient(app).get("/login")
    csp = r.headers["content-security-policy"]
    assert "form-action 'self'" in csp and "base-uri 'none'" in csp and "frame-ancestors 'none'" in csp
