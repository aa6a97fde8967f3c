"""Audit flags (``zuhyo audit``) resolved or dismissed from the pages that show them."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from zuhyo.annotate.web_context import app_state, back_path, checked_form, field_text, redirect, require_user

router = APIRouter()


@router.post("/flags/{flag_id}")
async def resolve(request: Request, flag_id: int) -> Response:
    """``status`` resolved or dismissed, with a note (an admin, an expert or the item's author; the workflow
    checks)."""
    from zuhyo.annotate.assign import resolve_flag

    user = require_user(request)
    form = await checked_form(request)
    status = field_text(form, "status", 16)
    if status not in ("resolved", "dismissed"):
        raise HTTPException(status_code=400, detail="status must be resolved or dismissed")
    resolve_flag(app_state(request).ws.db, user.id, flag_id, status, field_text(form, "resolution", 2000))
    return redirect(back_path(request))
