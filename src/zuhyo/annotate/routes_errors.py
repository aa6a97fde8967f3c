"""Error analysis (HakushoBench §6.3): tag a model's wrong answers with an error type and a note."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from zuhyo.annotate.web_context import (
    after_take,
    app_state,
    checked_form,
    field_int,
    field_text,
    redirect,
    require_role,
    submit_key,
    task_page,
)
from zuhyo.construct.workspace.qa_tables import ErrorSampleRow

router = APIRouter()

_TAGGERS = ("annotator", "expert", "admin")


def _take(request: Request, user_id: int, *, hand_out: bool = True) -> Any:
    from zuhyo.annotate.errors_analysis import next_error_task

    state = app_state(request)
    return next_error_task(state.ws.db, user_id, state.workflow, hand_out=hand_out)


@router.get("/errors")
def errors_page(request: Request) -> Response:
    user = require_role(request, *_TAGGERS)
    return task_page(request, _take(request, user.id, hand_out=False), "errors.html", title_key="errors.title",
                     take_url="/errors/next")


@router.post("/errors/next")
async def errors_next(request: Request) -> Response:
    """Take the next wrong answer to tag (work is handed out only on a POST)."""
    user = require_role(request, *_TAGGERS)
    await checked_form(request)
    return after_take(request, _take(request, user.id), "/errors", title_key="errors.title")


@router.get("/errors/{error_sample_id}/image")
def error_image(request: Request, error_sample_id: int) -> Response:
    """The image of an error sample, from the workspace store by its hash only: `zuhyo errors import` copied it
    there, so no path recorded in a run set is ever opened by the app."""
    from zuhyo.annotate.routes_pages import image_response

    require_role(request, *_TAGGERS)
    state = app_state(request)
    with state.ws.db.read() as s:
        row = s.get(ErrorSampleRow, error_sample_id)
        image = (row.payload or {}).get("image") if row is not None else None
    sha = image.get("sha256") if isinstance(image, dict) else None
    path = state.ws.images.path_for(sha) if isinstance(sha, str) and len(sha) == 64 else None
    if path is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return image_response(path)


@router.post("/errors")
async def errors_submit(request: Request) -> Response:
    from zuhyo.annotate.errors_analysis import submit_error_tag

    user = require_role(request, *_TAGGERS)
    form = await checked_form(request)
    result = submit_error_tag(app_state(request).ws.db, user.id, field_int(form, "assignment_id"),
                              field_text(form, "error_type", 64), field_text(form, "note") or None, submit_key(form))
    _take(request, user.id)  # the next one, so the next page has it (this is a POST)
    return redirect(f"/errors?done={result.outcome}")
