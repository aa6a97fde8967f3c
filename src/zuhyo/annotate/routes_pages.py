"""Home (my tasks per role) and the images of the workspace's content-addressed store."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, Response

from zuhyo.annotate.web_context import app_state, render, require_user

router = APIRouter()

_SHA = re.compile(r"[0-9a-f]{64}")


@router.get("/")
def home(request: Request) -> Response:
    from zuhyo.annotate.adjudicate import list_adjudications
    from zuhyo.annotate.assign import count_revisions

    user = require_user(request)
    state = app_state(request)
    revisions = count_revisions(state.ws.db, user.id) if (user.has("annotator") or user.has("admin")) else 0
    rulings = len(list_adjudications(state.ws.db, user.id, state.workflow)) if (
        user.has("annotator") or user.has("admin")) else 0
    return render(request, "home.html", revisions=revisions, rulings=rulings)


@router.get("/images/{sha}")
def image(request: Request, sha: str) -> Response:
    """An image by its SHA-256, with the content type of its bytes (signed-in users only)."""
    require_user(request)
    if not _SHA.fullmatch(sha):
        raise HTTPException(status_code=404, detail="Not Found")
    path = app_state(request).ws.images.path_for(sha)
    if path is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return image_response(path)


def image_response(path: Path) -> Response:
    """The file at ``path`` with the content type of its magic bytes; 404 when it is not an image."""
    from zuhyo.images.store import sniff_image_type

    with path.open("rb") as f:
        kind = sniff_image_type(f.read(16))
    if kind is None:
        raise HTTPException(status_code=404, detail="Not Found")
    return FileResponse(path, media_type=kind[1],
                        headers={"Cache-Control": "private, max-age=86400, immutable"})
