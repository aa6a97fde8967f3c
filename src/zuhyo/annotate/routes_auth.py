"""Log in (rate limited), log out (ending the session on the server), change one's password, switch language."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request
from fastapi.responses import Response

from zuhyo.annotate.auth import SessionSigner
from zuhyo.annotate.i18n import LOCALES
from zuhyo.annotate.web_context import (
    app_state,
    back_path,
    checked_form,
    client_address,
    current_user,
    field_text,
    redirect,
    render,
    require_user,
    session_of,
    set_session,
    sign_in,
    translator,
)

router = APIRouter()


@router.get("/login")
def login_page(request: Request) -> Response:
    if current_user(request) is not None:
        return redirect("/")
    flash = translator(request)("login.logged_out") if request.query_params.get("bye") else None
    return render(request, "login.html", flash=flash, flash_kind="ok")


@router.post("/login")
async def login(request: Request) -> Response:
    from zuhyo.annotate.users import authenticate

    state = app_state(request)
    form = await checked_form(request)
    name = field_text(form, "name", 200)
    password = field_text(form, "password", 1000)
    client = client_address(request)
    t = translator(request)
    wait = state.limiter.blocked(name, client)
    if wait > 0:
        return render(request, "login.html", status_code=429, name=name,
                      error=t("login.rate_limited", seconds=math.ceil(wait)))
    user = authenticate(state.ws.db, name, password) if name and password else None
    if user is None:
        state.limiter.failed(name, client)
        return render(request, "login.html", status_code=401, name=name, error=t("login.failed"))
    state.limiter.succeeded(name)
    sign_in(request, user.id)
    return redirect("/")


@router.post("/logout")
async def logout(request: Request) -> Response:
    """End the session on the server (a saved copy of the cookie stops working too) and forget it here."""
    from zuhyo.annotate.sessions import end_session
    from zuhyo.construct.qa.items import log_action

    await checked_form(request)
    session, user = session_of(request), current_user(request)
    if user is not None:
        with app_state(request).ws.db.write() as s:  # the session's end and its log entry in one transaction
            if end_session(s, session.sid, "logout"):
                log_action(s, actor=user.name, user_id=user.id, action="logout", target_type="user",
                           target_id=user.id)
    set_session(request, SessionSigner.new_session(locale=session.locale))
    return redirect("/login?bye=1")


@router.post("/locale")
async def switch_locale(request: Request) -> Response:
    """The user's language (``users.locale``); before logging in, the session's."""
    from zuhyo.annotate.users import set_locale

    form = await checked_form(request)
    locale = field_text(form, "locale", 8)
    if locale not in LOCALES:
        return render(request, "error.html", status_code=400, message_key="error.bad_request", detail=locale)
    user = current_user(request)
    if user is not None:
        set_locale(app_state(request).ws.db, user.id, locale, actor=user.name)
    else:
        session = session_of(request)
        session.locale = locale
        set_session(request, session)
    return redirect(back_path(request))


@router.get("/account/password")
def password_page(request: Request) -> Response:
    from zuhyo.annotate.users import MIN_PASSWORD_CHARS

    require_user(request)
    return render(request, "account_password.html", min_chars=MIN_PASSWORD_CHARS)


@router.post("/account/password")
async def change_password(request: Request) -> Response:
    """The signed-in user changes their own password (the current one is asked again, and wrong guesses count
    against the login limit); every session of theirs ends and this one is renewed."""
    from zuhyo.annotate.users import MIN_PASSWORD_CHARS, change_own_password
    from zuhyo.annotate.workflow import WorkflowError

    user = require_user(request)
    state, t = app_state(request), translator(request)
    form = await checked_form(request)
    current, new, repeat = (field_text(form, k, 1000) for k in ("current", "new", "repeat"))
    client = client_address(request)

    def again(status: int, error: str) -> Response:
        return render(request, "account_password.html", status_code=status, error=error,
                      min_chars=MIN_PASSWORD_CHARS)

    wait = state.limiter.blocked(user.name, client)
    if wait > 0:
        return again(429, t("login.rate_limited", seconds=math.ceil(wait)))
    if new != repeat:
        return again(400, t("account.mismatch"))
    try:
        changed = change_own_password(state.ws.db, user.id, current, new)
    except WorkflowError as e:
        if type(e) is not WorkflowError:
            raise
        return again(400, str(e))
    if changed is None:
        state.limiter.failed(user.name, client)
        return again(401, t("account.wrong_current"))
    sign_in(request, user.id)  # the change ended every session, this one included: a new one for this browser
    return render(request, "account_password.html", flash=t("account.changed"), flash_kind="ok",
                  min_chars=MIN_PASSWORD_CHARS)
