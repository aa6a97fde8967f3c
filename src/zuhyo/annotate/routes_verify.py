"""Blind verification (HakushoBench §3.3) and revision after a mismatch.

The verifier's page and JSON API are built from :class:`zuhyo.annotate.workflow.VerifyTask`, which has no answer,
caption or author: the reference never leaves the server on this path.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response

from zuhyo.annotate.web_context import (
    after_take,
    app_state,
    checked_form,
    checked_json,
    field_int,
    field_list,
    field_text,
    redirect,
    render,
    require_role,
    submit_key,
    task_page,
)

router = APIRouter()


def _matcher(request: Request) -> Any:
    """The judge that matches answers (``AppSettings.judge``), built once per app."""
    from zuhyo.annotate.workflow_match import judge_matcher

    state = app_state(request)
    if state.matcher is None:
        state.matcher = judge_matcher(state.settings.judge)
    return state.matcher


def _verify_json(task: Any) -> dict[str, Any]:
    return {"assignment_id": task.assignment_id, "qa_item_id": task.qa_item_id, "round": task.round,
            "question": task.question, "image": f"/images/{task.figure.sha256}",
            "width": task.figure.width, "height": task.figure.height,
            "expires_at": task.expires_at.isoformat() if task.expires_at else None}


def _take(request: Request, user_id: int, *, hand_out: bool = True) -> Any:
    from zuhyo.annotate.assign import next_verify_task

    state = app_state(request)
    return next_verify_task(state.ws.db, user_id, state.workflow, hand_out=hand_out)


@router.get("/verify")
def verify_page(request: Request) -> Response:
    user = require_role(request, "annotator")
    return task_page(request, _take(request, user.id, hand_out=False), "verify.html", title_key="verify.title",
                     take_url="/verify/next")


@router.post("/verify/next")
async def verify_next(request: Request) -> Response:
    """Take the next blind verification (work is handed out only on a POST)."""
    user = require_role(request, "annotator")
    await checked_form(request)
    return after_take(request, _take(request, user.id), "/verify", title_key="verify.title")


@router.post("/verify")
async def verify_submit(request: Request) -> Response:
    from zuhyo.annotate.assign import submit_verification

    user = require_role(request, "annotator")
    form = await checked_form(request)
    result = submit_verification(app_state(request).ws.db, user.id, field_int(form, "assignment_id"),
                                 field_text(form, "answer", 1000), submit_key(form), matcher=_matcher(request),
                                 config=app_state(request).workflow)
    _take(request, user.id)  # the next one, so the next page has it (this is a POST)
    return redirect(f"/verify?done={result.outcome}")


@router.get("/api/verify/current")
def api_verify_current(request: Request) -> Response:
    """The blind verification this user holds, as JSON (image URL and question only); ``null`` when none."""
    user = require_role(request, "annotator")
    task = _take(request, user.id, hand_out=False)
    return JSONResponse({"task": _verify_json(task) if task is not None else None})


@router.post("/api/verify/next")
async def api_verify_next(request: Request) -> Response:
    """The held or else the next blind verification as JSON (image URL and question only), with the
    ``X-CSRF-Token`` header: a POST, since it hands out work."""
    user = require_role(request, "annotator")
    await checked_json(request)
    task = _take(request, user.id)
    return JSONResponse({"task": _verify_json(task) if task is not None else None})


@router.post("/api/verify")
async def api_verify_submit(request: Request) -> Response:
    """``{"assignment_id", "answer", "submit_key"}`` with the ``X-CSRF-Token`` header; the result carries the
    outcome (accepted / revise), never the reference."""
    from zuhyo.annotate.assign import submit_verification

    user = require_role(request, "annotator")
    body = await checked_json(request)
    try:
        assignment_id, answer, key = int(body["assignment_id"]), str(body["answer"]), str(body["submit_key"])
    except (KeyError, TypeError, ValueError):
        raise HTTPException(status_code=400, detail="assignment_id, answer and submit_key are required") from None
    result = submit_verification(app_state(request).ws.db, user.id, assignment_id, answer,
                                 submit_key({"submit_key": key}), matcher=_matcher(request),
                                 config=app_state(request).workflow)
    return JSONResponse({**result.to_json(), "replayed": result.replayed})


def _revision(request: Request, qa_item_id: int) -> tuple[Any, Any]:
    from zuhyo.annotate.assign import list_revisions

    user = require_role(request, "annotator", "admin")
    for task in list_revisions(app_state(request).ws.db, user.id):
        if task.qa_item_id == qa_item_id:
            return user, task
    raise HTTPException(status_code=404, detail=f"QA item {qa_item_id} is not waiting for your revision")


@router.get("/revise")
def revise_list(request: Request) -> Response:
    from zuhyo.annotate.assign import list_revisions

    user = require_role(request, "annotator", "admin")
    tasks = list_revisions(app_state(request).ws.db, user.id)
    return render(request, "revise_list.html", tasks=tasks)


@router.get("/revise/{qa_item_id}")
def revise_page(request: Request, qa_item_id: int) -> Response:
    _, task = _revision(request, qa_item_id)
    from zuhyo.schema import Flag

    return render(request, "revise.html", task=task, flag_choices=[f.value for f in Flag])


@router.post("/revise/{qa_item_id}")
async def revise_submit(request: Request, qa_item_id: int) -> Response:
    from zuhyo.annotate.assign import submit_revision
    from zuhyo.annotate.grading import GRADING_FORM_FIELDS, Grading

    user, _ = _revision(request, qa_item_id)
    form = await checked_form(request)
    grading = (Grading.from_form({k: field_text(form, k) for k in GRADING_FORM_FIELDS})
               if field_text(form, "grading_present", 2) == "1" else None)
    result = submit_revision(app_state(request).ws.db, user.id, qa_item_id, field_text(form, "question"),
                             field_text(form, "answer", 1000), field_list(form, "difficulty") or None,
                             submit_key(form), comment=field_text(form, "comment") or None, grading=grading,
                             grading_confirmed=field_text(form, "grading_checked", 2) == "1",
                             config=app_state(request).workflow)
    return redirect(f"/revise?done={result.outcome}")


@router.post("/revise/{qa_item_id}/discard")
async def revise_discard(request: Request, qa_item_id: int) -> Response:
    from zuhyo.annotate.assign import discard

    user, _ = _revision(request, qa_item_id)
    form = await checked_form(request)
    result = discard(app_state(request).ws.db, user.id, qa_item_id, field_text(form, "reason", 1000) or "discarded",
                     submit_key(form))
    return redirect(f"/revise?done={result.outcome}")
