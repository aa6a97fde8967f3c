"""Expert review (DomainCQA §3.3): Valid / Flawed with a comment and an optional correction, rounds until
consensus. Experts are drawn at random by the workflow (the app's ``rng``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
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

router = APIRouter()


def _take(request: Request, user_id: int, *, hand_out: bool = True) -> Any:
    from zuhyo.annotate.review import next_review_task

    state = app_state(request)
    return next_review_task(state.ws.db, user_id, state.rng if hand_out else None, config=state.workflow)


@router.get("/review")
def review_page(request: Request) -> Response:
    user = require_role(request, "expert")
    return task_page(request, _take(request, user.id, hand_out=False), "review.html", title_key="review.title",
                     take_url="/review/next")


@router.post("/review/next")
async def review_next(request: Request) -> Response:
    """Take the next item to review, drawn at random (DomainCQA §3.3); work is handed out only on a POST."""
    user = require_role(request, "expert")
    await checked_form(request)
    return after_take(request, _take(request, user.id), "/review", title_key="review.title")


@router.post("/review")
async def review_submit(request: Request) -> Response:
    from zuhyo.annotate.review import submit_review

    user = require_role(request, "expert")
    form = await checked_form(request)
    question, answer = field_text(form, "correction_question"), field_text(form, "correction_answer", 1000)
    correction = {k: v for k, v in (("question", question), ("answer", answer)) if v} or None
    from zuhyo.annotate.review import ASPECTS

    aspects = {name: int(value) for name in ASPECTS if (value := field_text(form, name, 2)).isdigit()}
    result = submit_review(app_state(request).ws.db, user.id, field_int(form, "assignment_id"),
                           field_text(form, "rating", 16), submit_key(form),
                           comment=field_text(form, "comment") or None, correction=correction, aspects=aspects,
                           config=app_state(request).workflow)
    _take(request, user.id)  # the next one, so the next page has it (this is a POST)
    return redirect(f"/review?done={result.outcome}")
