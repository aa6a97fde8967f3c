"""Admin pages: the dashboard (progress, rates, skip reasons, Krippendorff's α) and the users page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from zuhyo.annotate.i18n import LOCALES
from zuhyo.annotate.web_context import (
    app_state,
    checked_form,
    field_list,
    field_text,
    redirect,
    render,
    require_role,
    translator,
)
from zuhyo.annotate.workflow import ROLES, WorkflowError

router = APIRouter()


@router.get("/dashboard")
def dashboard_page(request: Request) -> Response:
    from zuhyo.annotate.dashboard import dashboard

    require_role(request, "admin")
    state = app_state(request)
    return render(request, "dashboard.html", d=dashboard(state.ws.db, config=state.workflow))


def _users_page(request: Request, status_code: int = 200, flash: str | None = None, error: bool = False) -> Response:
    from zuhyo.annotate.users import list_users

    if flash is None:  # after a redirect: a message from the catalogue naming the user (escaped on the page)
        t, q = translator(request), request.query_params
        flash = (t("users.created", name=q["created"]) if "created" in q
                 else t("users.updated", name=q["updated"]) if "updated" in q else None)
    return render(request, "users.html", status_code=status_code, users=list_users(app_state(request).ws.db),
                  roles=ROLES, locales=LOCALES, flash=flash, flash_kind="error" if error else "ok")


@router.get("/admin/users")
def users_page(request: Request) -> Response:
    require_role(request, "admin")
    return _users_page(request)


@router.post("/admin/users")
async def users_add(request: Request) -> Response:
    from zuhyo.annotate.users import add_user

    admin = require_role(request, "admin")
    form = await checked_form(request)
    name = field_text(form, "name", 200)
    try:
        add_user(app_state(request).ws.db, name, field_text(form, "password", 1000), field_list(form, "roles"),
                 locale=field_text(form, "locale", 8) or "ja",
                 display_name=field_text(form, "display_name", 200) or None, actor=admin.name)
    except WorkflowError as e:
        return _users_page(request, status_code=400, flash=str(e), error=True)
    return redirect("/admin/users?created=" + _quote(name))


@router.post("/admin/users/{user_id}")
async def users_update(request: Request, user_id: int) -> Response:
    from zuhyo.annotate.users import activate, deactivate, get_user, set_password, set_roles

    admin = require_role(request, "admin")
    form = await checked_form(request)
    db = app_state(request).ws.db
    try:
        user = get_user(db, user_id)
        set_roles(db, user_id, field_list(form, "roles"), actor=admin.name)
        active = field_text(form, "active", 8) == "1"
        if active != user.active:
            (activate if active else deactivate)(db, user_id, actor=admin.name)
        password = field_text(form, "password", 1000)
        if password:
            set_password(db, user_id, password, actor=admin.name)
    except WorkflowError as e:
        return _users_page(request, status_code=400, flash=str(e), error=True)
    return redirect("/admin/users?updated=" + _quote(user.name))


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")
