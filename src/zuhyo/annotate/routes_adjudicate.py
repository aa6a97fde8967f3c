"""Adjudication (zuhyo's addition): rule *same* / *different* on a blind answer the judge could not match, or
*valid* / *flawed* on a review without consensus (:mod:`zuhyo.annotate.adjudicate`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from zuhyo.annotate.web_context import (
    app_state,
    checked_form,
    field_text,
    redirect,
    render,
    require_role,
    submit_key,
)

router = APIRouter()


@router.get("/adjudicate")
def adjudicate_list(request: Request) -> Response:
    from zuhyo.annotate.adjudicate import list_adjudications

    user = require_role(request, "annotator", "admin")
    state = app_state(request)
    return render(request, "adjudicate_list.html", items=list_adjudications(state.ws.db, user.id, state.workflow))


@router.get("/adjudicate/{qa_item_id}")
def adjudicate_page(request: Request, qa_item_id: int) -> Response:
    from zuhyo.annotate.adjudicate import get_adjudication

    user = require_role(request, "annotator", "admin")
    state = app_state(request)
    return render(request, "adjudicate.html", task=get_adjudication(state.ws.db, user.id, qa_item_id, state.workflow))


@router.post("/adjudicate/{qa_item_id}")
async def adjudicate_submit(request: Request, qa_item_id: int) -> Response:
    from zuhyo.annotate.adjudicate import submit_adjudication

    user = require_role(request, "annotator", "admin")
    form = await checked_form(request)
    state = app_state(request)
    result = submit_adjudication(state.ws.db, user.id, qa_item_id, field_text(form, "ruling", 16),
                                 field_text(form, "reason", 2000), submit_key(form), state.workflow)
    return redirect(f"/adjudicate?done={result.outcome}")
