"""Expert review (DomainCQA §3.3): Valid / Flawed with a comment and an optional correction, rounds until
consensus. Experts are drawn at random by the workflow (the app's ``rng``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
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


@router.get("/review")
def review_page(request: Request) -> Response:
    from zuhyo.annotate.review import next_review_task

    user = require_role(request, "expert")
    state = app_state(request)
    task = next_review_task(state.ws.db, user.id, state.rng, config=state.workflow)
    if task is None:
        return render(request, "no_task.html", title_key="review.title")
    return render(request, "review.html", task=task)


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
    return redirect(f"/review?done={result.outcome}")
