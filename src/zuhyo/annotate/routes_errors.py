"""Error analysis (HakushoBench §6.3): tag a model's wrong answers with an error type and a note."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

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
        return render(request, "no_task.html", title_key="errors.title")
    return render(request, "errors.html", task=task)


@router.get("/errors/{error_sample_id}/image")
def error_image(request: Request, error_sample_id: int) -> Response:
    """The image of an error sample: from the workspace store by hash, else the run set's local file."""
    from zuhyo.annotate.routes_pages import image_response
    from zuhyo.build.qa_tables import ErrorSampleRow

    require_role(request, *_TAGGERS)
    state = app_state(request)
    with state.ws.db.read() as s:
        row = s.get(ErrorSampleRow, error_sample_id)
        ref = dict((row.payload or {}).get("image") or {}) if row is not None else {}
        run_set = row.run_set if row is not None else ""
    sha = ref.get("sha256")
    path = state.ws.images.path_for(sha) if isinstance(sha, str) and len(sha) == 64 else None
    if path is None and isinstance(ref.get("path"), str):
        candidate = Path(ref["path"])
        candidate = candidate if candidate.is_absolute() else Path(run_set) / candidate
        path = candidate if candidate.is_file() else None
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
    return redirect(f"/errors?done={result.outcome}")
