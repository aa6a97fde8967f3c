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
