"""Authoring, blind verification and revision (HakushoBench §3.2–3.3) as database transactions.

Each function is one write transaction. Handing out work is atomic: an assignment row is live (open or
submitted) for at most one person per (step, target, round, slot) — a partial unique index — and on PostgreSQL
the hand-out additionally runs under a transaction-scoped advisory lock, as SQLite's ``BEGIN IMMEDIATE`` does.
"""

from __future__ import annotations

from zuhyo.annotate.workflow import (
    AuthorTask,
    Matcher,
    RevisionTask,
    SubmitResult,
    VerifyTask,
    WorkflowConfig,
)
from zuhyo.build.db import Database

DEFAULT_CONFIG = WorkflowConfig()


def next_author_task(db: Database, user_id: int, config: WorkflowConfig = DEFAULT_CONFIG) -> AuthorTask | None:
    """The annotator's open authoring assignment, else a new one, else None (nothing left).

    A new figure is chosen balanced across sources (the source with the fewest authored items first, then the
    figure with the fewest, then the lowest id), among the current sample (all figures not dropped when there is
    no sample); never a figure the user authored or skipped, nor one another author holds open, nor one with
    ``config.authors_per_figure`` live human items. Stale assignments are released first.
    """
    raise NotImplementedError


def submit_authored(db: Database, user_id: int, assignment_id: int, question: str, answer: str,
                    difficulty: list[str], submit_key: str, *, from_draft_id: int | None = None,
                    style: str = "hakusho") -> SubmitResult:
    """Store the author's QA item (status ``authored``, waiting for blind verification); one per figure per
    author. ``difficulty``: one or more HakushoBench flags."""
    raise NotImplementedError


def skip_task(db: Database, user_id: int, assignment_id: int, reason: str, submit_key: str) -> SubmitResult:
    """Skip an assignment of any step with a reason (HakushoBench §3.2: images without a good question are
    skipped); the user is not offered the same target again."""
    raise NotImplementedError


def release_task(db: Database, user_id: int, assignment_id: int) -> SubmitResult:
    """Give an open assignment back unanswered (it goes to someone else); not a skip."""
    raise NotImplementedError


def next_verify_task(db: Database, user_id: int, config: WorkflowConfig = DEFAULT_CONFIG) -> VerifyTask | None:
    """The annotator's open verification, else a new blind one on an item authored by someone else and never
    verified by this user, else None."""
    raise NotImplementedError


def submit_verification(db: Database, user_id: int, assignment_id: int, answer: str, submit_key: str,
                        matcher: Matcher | None = None) -> SubmitResult:
    """Match the blind answer with the reference (``matcher``; default the ``rules`` judge): match → accepted,
    mismatch or undecided → revise (back to the author)."""
    raise NotImplementedError


def list_revisions(db: Database, user_id: int) -> list[RevisionTask]:
    """Items waiting for revision that this user may revise: their own, or every one for an admin."""
    raise NotImplementedError


def submit_revision(db: Database, user_id: int, qa_item_id: int, question: str, answer: str,
                    difficulty: list[str] | None, submit_key: str, comment: str | None = None) -> SubmitResult:
    """Revise an item in ``revise`` (its author, or an admin): verification items go back to blind
    verification (next round, a user who has not verified it yet); reviewed items to a new review round."""
    raise NotImplementedError


def discard(db: Database, user_id: int, qa_item_id: int, reason: str, submit_key: str | None = None) -> SubmitResult:
    """Discard an item (its author while it waits for revision, or an admin at any time); kept, never deleted."""
    raise NotImplementedError


def resolve_flag(db: Database, user_id: int, flag_id: int, status: str, resolution: str) -> None:
    """Mark an audit flag resolved or dismissed, with a note."""
    raise NotImplementedError
