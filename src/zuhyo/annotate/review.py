"""Expert review rounds (DomainCQA §3.3 and §4.3): two randomly drawn experts judge each drafted QA item Valid or
Flawed; agreement decides, disagreement adds a round with another expert until consensus; every round is kept."""

from __future__ import annotations

import random
from typing import Any

from zuhyo.annotate.workflow import ReviewTask, SubmitResult, WorkflowConfig
from zuhyo.build.db import Database

DEFAULT_CONFIG = WorkflowConfig()


def assign_reviews(db: Database, rng: random.Random, *, config: WorkflowConfig = DEFAULT_CONFIG,
                   qa_item_ids: list[int] | None = None, actor: str = "zuhyo review") -> int:
    """Draw experts at random (``rng``, seed it for a reproducible draw) for every drafted item that needs
    reviewers in its current round (two distinct experts in the first round, one more after a disagreement),
    never its author nor an expert who already rated it; returns how many assignments were made."""
    raise NotImplementedError


def next_review_task(db: Database, user_id: int, rng: random.Random | None = None, *,
                     config: WorkflowConfig = DEFAULT_CONFIG) -> ReviewTask | None:
    """The expert's open review assignment; when there is none and ``rng`` is given, a new one on an item (drawn
    at random) that needs a reviewer this expert has not been; else None."""
    raise NotImplementedError


def submit_review(db: Database, user_id: int, assignment_id: int, rating: str, submit_key: str,
                  comment: str | None = None, correction: dict[str, str] | None = None, *,
                  config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Record a Valid / Flawed rating; when the round completes: consensus valid → accepted, consensus flawed →
    revise, disagreement → next round (``reviewing``)."""
    raise NotImplementedError


def review_alpha(db: Database) -> dict[str, Any]:
    """Krippendorff's α (nominal) of the expert ratings: ``{"overall": {...}, "rounds": {round: {...}}}``, each
    ``{"alpha", "coders", "units", "ratings"}`` (alpha None when undefined)."""
    raise NotImplementedError
