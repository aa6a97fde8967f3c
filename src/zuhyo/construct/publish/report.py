"""What ``zuhyo export`` wrote: the report the command prints and the dataset card is rendered from."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ExportFailure(BaseModel):
    """An item that could not be exported, and why."""

    item: str
    """``qa-<id>``, the sample id the item would have had."""
    figure_id: int
    reason: str


class ExportReport(BaseModel):
    """What ``zuhyo export`` wrote (``--json`` prints the first five fields and the rest)."""

    items: int
    images: int
    """Distinct images (by SHA-256) in the exported rows."""
    shards: list[str]
    """Parquet shards, relative to ``out``."""
    out: str
    card: str
    name: str
    split: str
    images_mode: str
    by_status: dict[str, int] = Field(default_factory=dict)
    skipped: int = 0
    """Items left out because of an error (only with ``skip_missing``)."""
    error_items: list[ExportFailure] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)
    funnel: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Per protocol, the items at each human check (:func:`zuhyo.construct.qa.gates.funnel`)."""
    review_alpha: dict[str, Any] | None = None
    """Krippendorff's α of the expert ratings with its 95 % CI (``{"alpha", "ci95", ...}``), if any."""
    dry_run: int = 0
    """Items holding dry-run placeholders, exported with ``allow_dry_run`` (a rehearsal, not data)."""
    pushed_to: str | None = None
