"""Error analysis (HakushoBench §6.3): tag a model's wrong answers with an error type and a note."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from zuhyo.annotate.routes_pages import outcome_flash
from zuhyo.annotate.web_context import (
    app_state,
    checked_form,
    field_int,
    field_text,
    redirect,
    render,
    require_role,
    submit_key,
)

router = APIRouter()

_TAGGERS = ("annotator", "expert", "admin")


@router.get("/errors")
def errors_page(request: Request) -> Response:
    from zuhyo.annotate.errors_analysis import next_error_task

    user = require_role(request, *_TAGGERS)
    task = next_error_task(app_state(request).ws.db, user.id)
    if task is None:
        return render(request, "no_task.html", title_key="errors.title", flash=outcome_flash(request),
                      flash_kind="ok")
    image = task.payload.get("image_sha256") or task.payload.get("sha256")
    return render(request, "errors.html", task=task, image=image if isinstance(image, str) else None,
                  flash=outcome_flash(request), flash_kind="ok")


@router.post("/errors")
async def errors_submit(request: Request) -> Response:
    from zuhyo.annotate.errors_analysis import submit_error_tag

    user = require_role(request, *_TAGGERS)
    form = await checked_form(request)
    result = submit_error_tag(app_state(request).ws.db, user.id, field_int(form, "assignment_id"),
                              field_text(form, "error_type", 64), field_text(form, "note") or None, submit_key(form))
    return redirect(f"/errors?done={result.outcome}")
