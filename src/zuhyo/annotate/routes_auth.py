"""Log in (rate limited), log out, switch language."""

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
    current_user,
    field_text,
    redirect,
    render,
    session_of,
    set_session,
    translator,
    user_credential,
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
    client = request.client.host if request.client else "unknown"
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
    # A new session id (no fixation), bound to the password the user has now.
    set_session(request, SessionSigner.new_session(user_id=user.id, credential=user_credential(state, user.id)))
    return redirect("/")


@router.post("/logout")
async def logout(request: Request) -> Response:
    await checked_form(request)
    set_session(request, SessionSigner.new_session(locale=session_of(request).locale))
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
