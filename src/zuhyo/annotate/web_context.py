"""Per-request context of the annotation app's pages: the session, the signed-in user, their language, and the
one way to render a page or check a form's CSRF token. Routes use these and stay thin."""

from __future__ import annotations

import hmac
import json
import random
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from zuhyo.annotate.auth import COOKIE_NAME, LoginLimiter, Session, SessionSigner
from zuhyo.annotate.i18n import Translator, normalise_locale
from zuhyo.annotate.workflow import WorkflowConfig

if TYPE_CHECKING:
    from fastapi.templating import Jinja2Templates

    from zuhyo.annotate.users import User
    from zuhyo.construct.workspace import Workspace


@dataclass
class AppSettings:
    """How ``zuhyo serve`` runs the app."""

    runs_dir: Path | None = None
    """A run set whose wrong answers were loaded for error analysis (HakushoBench §6.3)."""
    secure_cookies: bool = False
    """Mark the session cookie ``Secure`` (serve behind HTTPS)."""
    login_max_failures: int = 5
    login_window_s: float = 300.0
    session_max_age_s: int = 12 * 3600
    judge: str = "rules"
    """The judge that matches an author's and a verifier's answers (``rules`` or ``cascade:<spec>``)."""


@dataclass
class AppState:
    """Everything the routes share, kept on ``app.state.zuhyo`` (one per app; nothing global)."""

    ws: Workspace
    settings: AppSettings
    signer: SessionSigner
    limiter: LoginLimiter
    catalogue: dict[str, dict[str, str]]
    templates: Jinja2Templates
    rng: random.Random = field(default_factory=lambda: random.Random(secrets.randbits(64)))
    """Draws experts for review (DomainCQA §3.3: at random)."""
    matcher: Any = None
    """The answer matcher (built from ``settings.judge`` on first use)."""
    workflow: WorkflowConfig = field(default_factory=WorkflowConfig)
    """The workspace's protocols (``[protocol]`` of ``zuhyo.toml``) and workflow knobs."""


def app_state(request: Request) -> AppState:
    state: AppState = request.app.state.zuhyo
    return state


def session_of(request: Request) -> Session:
    """The request's session (made by the session middleware; a fresh anonymous one when the cookie was bad)."""
    session: Session = request.state.session
    return session


def set_session(request: Request, session: Session) -> None:
    """Replace the session; the middleware writes the new cookie on the response."""
    request.state.session = session
    request.state.session_changed = True


def load_user(state: AppState, session: Session) -> User | None:
    """The session's user when the session is live on the server (not logged out, expired or ended by a password
    change), the user is active and their password has not changed since the login; None otherwise."""
    from zuhyo.annotate.sessions import session_is_live, session_key
    from zuhyo.annotate.users import to_user
    from zuhyo.construct.workspace.qa_tables import UserRow, WebSessionRow

    if session.user_id is None or session.credential is None:
        return None
    with state.ws.db.read() as s:
        if not session_is_live(s.get(WebSessionRow, session_key(session.sid)), session.user_id):
            return None
        row = s.get(UserRow, session.user_id)
        if row is None or not row.active:
            return None
        if not hmac.compare_digest(state.signer.credential(row.password_hash), session.credential):
            return None
        return to_user(row)


def user_credential(state: AppState, user_id: int) -> str:
    """The credential digest a new session of ``user_id`` carries."""
    from zuhyo.construct.workspace.qa_tables import UserRow

    with state.ws.db.read() as s:
        row = s.get(UserRow, user_id)
        return state.signer.credential(row.password_hash if row is not None else "")


def client_address(request: Request) -> str:
    """The client's address: the socket's peer, or the address a trusted proxy forwarded (``zuhyo serve
    --forwarded-allow-ips``; uvicorn rewrites ``request.client`` only for those proxies)."""
    return request.client.host if request.client else "unknown"


def sign_in(request: Request, user_id: int) -> None:
    """Start a server-side session for ``user_id`` with a new session id (no fixation), bound to the password
    the user has now, and send its cookie."""
    from zuhyo.annotate.sessions import start_session

    state = app_state(request)
    session = SessionSigner.new_session(user_id=user_id, credential=user_credential(state, user_id))
    start_session(state.ws.db, session.sid, user_id, state.settings.session_max_age_s, client_address(request))
    set_session(request, session)


def current_user(request: Request) -> User | None:
    if not hasattr(request.state, "user"):
        request.state.user = load_user(app_state(request), session_of(request))
    user: User | None = request.state.user
    return user


class LoginRequired(Exception):
    """Raised for a page that needs a signed-in user; answered with a redirect to the login page (API: 401)."""


def require_user(request: Request) -> User:
    user = current_user(request)
    if user is None:
        raise LoginRequired()
    return user


def require_role(request: Request, *roles: str) -> User:
    """The user, when they have one of ``roles``; 403 otherwise (an annotator cannot open admin pages)."""
    user = require_user(request)
    if not any(user.has(role) for role in roles):
        raise HTTPException(status_code=403, detail="forbidden")
    return user


def translator(request: Request) -> Translator:
    state = app_state(request)
    user = current_user(request)
    locale = user.locale if user is not None else normalise_locale(session_of(request).locale)
    return Translator(state.catalogue, locale)


def csrf_token(request: Request) -> str:
    return app_state(request).signer.csrf_token(session_of(request))


async def checked_form(request: Request) -> dict[str, Any]:
    """The posted form, after its ``csrf_token`` is checked against the session (403 when it does not match).

    Repeated fields (checkboxes) come back as lists under their name.
    """
    form = await request.form()
    token = form.get("csrf_token")
    if not app_state(request).signer.csrf_ok(session_of(request), token if isinstance(token, str) else None):
        raise HTTPException(status_code=403, detail="csrf")
    out: dict[str, Any] = {}
    for key in form.keys():
        values = [v for v in form.getlist(key) if isinstance(v, str)]
        out[key] = values if len(values) > 1 or key.endswith("[]") else (values[0] if values else "")
    return out


async def checked_json(request: Request) -> dict[str, Any]:
    """The posted JSON object, after the ``X-CSRF-Token`` header is checked (403 when it does not match)."""
    if not app_state(request).signer.csrf_ok(session_of(request), request.headers.get("x-csrf-token")):
        raise HTTPException(status_code=403, detail="csrf")
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        raise HTTPException(status_code=400, detail="the body is not JSON") from None
    if not isinstance(body, dict):
        raise HTTPException(status_code=400, detail="the body is not a JSON object")
    return body


def outcome_flash(request: Request) -> str | None:
    """The message for ``?done=<outcome>`` after a submission (only outcomes in the catalogue are shown)."""
    done = request.query_params.get("done")
    t = translator(request)
    if done and t.has(f"outcome.{done}"):
        return t("home.done_message", outcome=t(f"outcome.{done}"))
    return None


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """A page from ``templates/``, with the user, their translator and the CSRF token available to it; the
    outcome of the last submission (``?done=``) is the page's message unless ``flash`` is given."""
    state = app_state(request)
    t = translator(request)
    if "flash" not in context:
        context["flash"], context["flash_kind"] = outcome_flash(request), "ok"
    response: HTMLResponse = state.templates.TemplateResponse(
        request, template, {"user": current_user(request), "t": t, "locale": t.locale,
                            "csrf_token": csrf_token(request), **context},
        status_code=status_code)
    return response


def task_page(request: Request, task: Any, template: str, *, title_key: str, take_url: str,
              status_code: int = 200, **context: Any) -> HTMLResponse:
    """The page of the task the user holds; without one, a page whose button takes the next task (a POST to
    ``take_url``): a GET never hands out work, so a prefetching browser or a link checker takes none."""
    if task is None:
        return render(request, "take_task.html", title_key=title_key, take_url=take_url)
    return render(request, template, status_code=status_code, task=task, **context)


def after_take(request: Request, task: Any, page_url: str, *, title_key: str) -> Any:
    """The answer to a POST that took the next task: to its page, or "no task for you now"."""
    if task is None:
        return render(request, "no_task.html", title_key=title_key)
    return redirect(page_url)


def back_path(request: Request) -> str:
    """The page the request came from (its ``Referer``) when it is a page of this app, else ``/``: never an open
    redirect."""
    back, base = request.headers.get("referer") or "", str(request.base_url).rstrip("/")
    path = back[len(base):] if back.startswith(base + "/") else "/"
    return path if path.startswith("/") and not path.startswith("//") else "/"


def redirect(url: str) -> RedirectResponse:
    """See-other to ``url`` (after a POST, so a reload does not post again)."""
    return RedirectResponse(url, status_code=303)


def write_session_cookie(request: Request, response: Any) -> None:
    state = app_state(request)
    response.set_cookie(COOKIE_NAME, state.signer.dumps(session_of(request)), max_age=state.settings.session_max_age_s,
                        httponly=True, samesite="lax", secure=state.settings.secure_cookies, path="/")


def field_text(form: dict[str, Any], name: str, max_chars: int = 4000) -> str:
    """A form field as stripped text (the first value when repeated), at most ``max_chars`` (400 beyond)."""
    value = form.get(name, "")
    if isinstance(value, list):
        value = value[0] if value else ""
    text = str(value).strip()
    if len(text) > max_chars:
        raise HTTPException(status_code=400, detail=f"{name} is longer than {max_chars} characters")
    return text


def field_int(form: dict[str, Any], name: str) -> int:
    """A form field that must be a whole number (an id); 400 otherwise."""
    text = field_text(form, name, 20)
    if not text.isdigit():
        raise HTTPException(status_code=400, detail=f"{name} must be a number")
    return int(text)


def field_list(form: dict[str, Any], name: str) -> list[str]:
    """A repeated form field (checkboxes) as a list of its non-empty values."""
    value = form.get(name, [])
    values = value if isinstance(value, list) else [value]
    return [str(v) for v in values if str(v).strip()]


def submit_key(form: dict[str, Any]) -> str:
    """The form's idempotency key (a UUID rendered into the page); 400 when missing or malformed."""
    import uuid

    key = field_text(form, "submit_key", 100)
    try:
        return str(uuid.UUID(key))
    except ValueError:
        raise HTTPException(status_code=400, detail="submit_key is missing or not a UUID") from None
