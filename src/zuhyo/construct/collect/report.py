"""What every collector reports: the counts ``zuhyo collect … --json`` prints, and one failed item."""

from __future__ import annotations

from pydantic import BaseModel


class ItemFailure(BaseModel):
    """One file or item that could not be collected."""

    file: str
    """The file (or ``paper: item``) that failed."""
    reason: str
    """Why, in one line (also recorded in the workspace's ``item_errors``)."""


class CollectCounts(BaseModel):
    """The counts every collector run reports (for this run only); collectors add their own fields."""

    figures: int = 0
    """Figures added."""
    documents: int = 0
    """Documents added (sub-folders, pages, papers or PDFs, by collector)."""
    errors: int = 0
    """Items that failed, each recorded in the workspace with its reason."""
    skipped_existing: int = 0
    """Figures already in the workspace from an earlier run."""


def error_reason(e: BaseException) -> str:
    """One line for an unexpected error on untrusted input (mupdf's ``FzError*``, a decoder's): its kind and the
    first line of its message, cut at 200 characters; a :class:`~zuhyo.errors.ZuhyoError` is its own message."""
    from zuhyo.errors import ZuhyoError

    if isinstance(e, ZuhyoError):
        return str(e)
    text = (str(e).strip().splitlines() or [""])[0][:200]
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
