"""The team lead's numbers: progress per stage and per person, items per hour, acceptance / revision / discard
rates, skip reasons and the experts' α."""

from __future__ import annotations

from typing import Any

from zuhyo.build.db import Database


def dashboard(db: Database) -> dict[str, Any]:
    """``{"items": {status: n}, "steps": {step: {status: n}}, "people": [...], "rates": {...},
    "skip_reasons": {step: {reason: n}}, "items_per_hour": {...}, "alpha": {...}, "errors": {...} | None}``."""
    raise NotImplementedError
