"""The grading page: an item's answer kind, axis range and scale, and key points, checked and corrected by an
admin, an expert or its author (:mod:`zuhyo.annotate.grading`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from zuhyo.annotate.web_context import app_state, checked_form, field_text, redirect, render, require_user, submit_key

router = APIRouter()


@router.get("/grading/{qa_item_id}")
def grading_page(request: Request, qa_item_id: int) -> Response:
    from zuhyo.annotate.grading import get_grading

    user = require_user(request)
    item, grading = get_grading(app_state(request).ws.db, user.id, qa_item_id)
    g = {"answer_kind": grading.answer_kind, "key_points": grading.key_points,
         "axis": grading.fields()["axis"]}
    return render(request, "grading.html", item=item, g=g, stale=bool((item.meta or {}).get("grading_stale")))


@router.post("/grading/{qa_item_id}")
async def grading_submit(request: Request, qa_item_id: int) -> Response:
    from zuhyo.annotate.grading import GRADING_FORM_FIELDS, Grading, submit_grading

    user = require_user(request)
    form = await checked_form(request)
    grading = Grading.from_form({k: field_text(form, k) for k in GRADING_FORM_FIELDS})
    submit_grading(app_state(request).ws.db, user.id, qa_item_id, grading, submit_key(form))
    return redirect(f"/grading/{qa_item_id}?done=graded")
