"""Error analysis (HakushoBench §6.3): tag a model's wrong answers with an error type and a note."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from zuhyo.annotate.web_context import (
    AppState,
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
    """The image of an error sample: from the workspace store by hash, else the benchmark's local file (a relative
    path is resolved against the folder the run set's benchmark was loaded from)."""
    from zuhyo.annotate.routes_pages import image_response
    from zuhyo.construct.workspace.qa_tables import ErrorSampleRow
    from zuhyo.schema import ImageRef

    require_role(request, *_TAGGERS)
    state = app_state(request)
    with state.ws.db.read() as s:
        row = s.get(ErrorSampleRow, error_sample_id)
        if row is None or not (row.payload or {}).get("image"):
            raise HTTPException(status_code=404, detail="Not Found")
        payload, run_set = dict(row.payload), row.run_set
    ref = ImageRef.model_validate(payload["image"])
    path = state.ws.images.path_for(ref.sha256) if ref.sha256 and len(ref.sha256) == 64 else None
    if path is None:
        candidate = ref.resolve_path(_base_dir(state, run_set, str(payload.get("benchmark", ""))))
        path = candidate if candidate is not None and candidate.is_file() else None
    if path is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return image_response(path)


def _base_dir(state: AppState, run_set: str, benchmark: str) -> Path | None:
    """The folder ``benchmark`` of ``run_set`` was loaded from (read once per run set and app)."""
    if run_set not in state.runset_dirs:
        from zuhyo.errors import ZuhyoError
        from zuhyo.report.runsets import load_runset

        try:
            state.runset_dirs[run_set] = load_runset(Path(run_set)).base_dirs
        except (ZuhyoError, OSError):
            state.runset_dirs[run_set] = {}
    return state.runset_dirs[run_set].get(benchmark)


@router.post("/errors")
async def errors_submit(request: Request) -> Response:
    from zuhyo.annotate.errors_analysis import submit_error_tag

    user = require_role(request, *_TAGGERS)
    form = await checked_form(request)
    result = submit_error_tag(app_state(request).ws.db, user.id, field_int(form, "assignment_id"),
                              field_text(form, "error_type", 64), field_text(form, "note") or None, submit_key(form))
    return redirect(f"/errors?done={result.outcome}")
