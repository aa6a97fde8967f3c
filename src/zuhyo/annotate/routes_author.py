"""Authoring (HakushoBench §3.2): one question, one short answer and difficulty flags per image, or a skip."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from zuhyo.annotate.web_context import (
    after_take,
    app_state,
    checked_form,
    field_int,
    field_list,
    field_text,
    redirect,
    require_role,
    submit_key,
    task_page,
)
from zuhyo.annotate.workflow import WorkflowError

router = APIRouter()

#: Skip reasons offered on the page (their labels are ``skip_reason.<key>`` in the catalogue).
SKIP_REASONS = ("not_chart", "unreadable", "too_simple", "duplicate", "other")


def _page(request: Request, status_code: int = 200, error: str | None = None,
          values: dict[str, Any] | None = None) -> Response:
    from zuhyo.annotate.assign import next_author_task

    user = require_role(request, "annotator")
    task = next_author_task(app_state(request).ws.db, user.id, hand_out=False)
    return task_page(request, task, "author.html", title_key="author.title", take_url="/author/next",
                     status_code=status_code, skip_reasons=SKIP_REASONS, error=error, values=values or {})


def _take(request: Request, user_id: int) -> Any:
    from zuhyo.annotate.assign import next_author_task

    state = app_state(request)
    return next_author_task(state.ws.db, user_id, state.workflow)


@router.get("/author")
def author_page(request: Request) -> Response:
    return _page(request)


@router.post("/author/next")
async def author_next(request: Request) -> Response:
    """Take the next image to write a question on (work is handed out only on a POST)."""
    user = require_role(request, "annotator")
    await checked_form(request)
    return after_take(request, _take(request, user.id), "/author", title_key="author.title")


@router.post("/author")
async def author_submit(request: Request) -> Response:
    from zuhyo.annotate.assign import submit_authored

    user = require_role(request, "annotator")
    form = await checked_form(request)
    question, answer = field_text(form, "question"), field_text(form, "answer", 1000)
    difficulty, draft = field_list(form, "difficulty"), field_text(form, "from_draft_id", 20)
    values: dict[str, Any] = {"question": question, "answer": answer, "difficulty": difficulty,
                              "from_draft_id": draft}
    try:
        result = submit_authored(app_state(request).ws.db, user.id, field_int(form, "assignment_id"),
                                 question, answer, difficulty, submit_key(form),
                                 from_draft_id=int(draft) if draft.isdigit() else None,
                                 config=app_state(request).workflow)
    except WorkflowError as e:
        if type(e) is not WorkflowError:
            raise  # NotAllowed / NotFound / Conflict: the error page
        return _page(request, status_code=400, error=str(e), values=values)  # keep what they typed
    _take(request, user.id)  # the next image, so the next page has it (this is a POST)
    return redirect(f"/author?done={result.outcome}")


@router.post("/author/skip")
async def author_skip(request: Request) -> Response:
    from zuhyo.annotate.assign import skip_task

    user = require_role(request, "annotator")
    form = await checked_form(request)
    reason = field_text(form, "reason", 40)
    note = field_text(form, "note", 1000)
    result = skip_task(app_state(request).ws.db, user.id, field_int(form, "assignment_id"),
                       f"{reason}: {note}" if note else reason, submit_key(form))
    _take(request, user.id)
    return redirect(f"/author?done={result.outcome}")
