"""The annotation web app (issue 12): FastAPI with server-rendered Jinja2 pages over a construction workspace.

``create_app(workspace, settings)`` builds the app; ``zuhyo serve WS`` runs it under uvicorn. The routes
(``routes_*.py``) only parse input, call :mod:`zuhyo.annotate.workflow` and render; the workflow is the state
machine of HakushoBench §3.2–3.3 (authoring, blind verification) and DomainCQA §3.3 (expert review rounds).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from zuhyo.annotate.auth import COOKIE_NAME, LoginLimiter, SessionSigner, load_or_create_secret
from zuhyo.annotate.i18n import load_catalogue
from zuhyo.annotate.web_context import AppSettings, AppState, LoginRequired, app_state, render, write_session_cookie

if TYPE_CHECKING:
    from zuhyo.construct.workspace import Workspace

_ROUTE_MODULES = ("routes_auth", "routes_pages", "routes_author", "routes_verify", "routes_review", "routes_errors",
                  "routes_admin", "routes_flags", "routes_adjudicate", "routes_grading")


def _package_dir(name: str) -> Path:
    return Path(str(resources.files("zuhyo.annotate").joinpath(name)))


def create_app(workspace: Workspace | Path | str, settings: AppSettings | None = None) -> FastAPI:
    """The app over ``workspace`` (an open :class:`Workspace` or its folder, opened and upgraded here)."""
    import importlib
    import uuid

    from fastapi.staticfiles import StaticFiles
    from fastapi.templating import Jinja2Templates

    from zuhyo.annotate.workflow import WorkflowConfig
    from zuhyo.construct.workspace import Workspace

    ws = workspace if isinstance(workspace, Workspace) else Workspace.open(Path(workspace))
    settings = settings or AppSettings()
    templates = Jinja2Templates(directory=str(_package_dir("templates")))  # autoescape on for .html
    templates.env.globals["new_key"] = lambda: str(uuid.uuid4())  # a form's idempotent submit key
    state = AppState(ws=ws, settings=settings,
                     signer=SessionSigner(load_or_create_secret(ws.root), settings.session_max_age_s),
                     limiter=LoginLimiter(settings.login_max_failures, settings.login_window_s),
                     catalogue=load_catalogue(), templates=templates,
                     workflow=WorkflowConfig.from_workspace(ws.config))
    app = FastAPI(title="zuhyo annotate", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.zuhyo = state
    app.mount("/static", StaticFiles(directory=str(_package_dir("static"))), name="static")

    @app.middleware("http")
    async def session_middleware(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        st = app_state(request)
        session = st.signer.loads(request.cookies.get(COOKIE_NAME))
        request.state.session_changed = session is None
        request.state.session = session or SessionSigner.new_session()
        response = await call_next(request)
        if request.state.session_changed:
            write_session_cookie(request, response)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; "
            "form-action 'self'; base-uri 'none'")
        return response

    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": "login required"}, status_code=401)
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(StarletteHTTPException)  # FastAPI's HTTPException too, and unknown paths (404)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _error_response(request, exc.status_code, str(exc.detail))

    _register_workflow_errors(app)

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    for name in _ROUTE_MODULES:
        app.include_router(importlib.import_module(f"zuhyo.annotate.{name}").router)
    return app


def _error_response(request: Request, status: int, detail: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": detail}, status_code=status)
    key = {403: "error.forbidden", 404: "error.not_found", 409: "error.conflict", 429: "error.rate_limited"}.get(
        status, "error.bad_request")
    return render(request, "error.html", status_code=status, message_key=key, detail=detail)


def _register_workflow_errors(app: FastAPI) -> None:
    """The workflow's refusals as HTTP answers: NotAllowed 403, NotFound 404, Conflict 409, other 400."""
    from zuhyo.annotate import workflow

    statuses: list[tuple[type[Exception], int]] = [(workflow.NotAllowed, 403), (workflow.NotFound, 404),
                                                   (workflow.Conflict, 409), (workflow.WorkflowError, 400)]
    for exc_type, status in statuses:
        def handler(request: Request, exc: Exception, status: int = status) -> Response:
            return _error_response(request, status, str(exc))
        app.add_exception_handler(exc_type, handler)
