"""The team lead's numbers: progress per stage and per person, items per hour, acceptance / revision / discard
rates, skip reasons, the experts' Krippendorff's α and the error-analysis breakdown — all read from the
workspace database in one read transaction (α and the breakdown in their own)."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from zuhyo.annotate.assign_base import aware
from zuhyo.annotate.workflow import WorkflowConfig
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import utcnow
from zuhyo.construct.workspace.qa_tables import AssignmentRow, QAItemRow, ReviewRow, UserRow, VerificationRow


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _hours(start: datetime | None, end: datetime | None) -> float:
    a, b = aware(start), aware(end)
    return max((b - a).total_seconds(), 0.0) / 3600 if a and b else 0.0


def dashboard(db: Database, *, now: datetime | None = None, config: WorkflowConfig | None = None) -> dict[str, Any]:
    """Everything the dashboard shows:

    - ``items``: QA items per status; ``by_origin``: per origin and status;
    - ``steps``: assignments per step and status (open, submitted, released, skipped);
    - ``people``: per user — authored, verified, reviewed, tagged, skipped, open, ``items_per_hour`` (submitted
      assignments per hour spent on them, from hand-out to submission);
    - ``throughput``: submissions in the last hour and per hour since the first one;
    - ``rates``: verification match rate; of decided items the accepted and discarded shares; of items that got
      a verdict, the share sent back for revision at least once;
    - ``skip_reasons``: per step, reason → count;
    - ``alpha``: :func:`zuhyo.annotate.review.review_alpha`; ``errors``: :func:`error_breakdown` or None;
    - ``stuck``: items waiting for a person who does not exist (:func:`zuhyo.annotate.adjudicate.stuck_items`).
    """
    from zuhyo.annotate.adjudicate import stuck_items
    from zuhyo.annotate.errors_analysis import error_breakdown
    from zuhyo.annotate.review import review_alpha

    now = now or utcnow()
    with db.read() as s:
        items = list(s.execute(select(QAItemRow.origin, QAItemRow.status, QAItemRow.meta, QAItemRow.id)))
        assignments = list(s.execute(select(AssignmentRow.step, AssignmentRow.status, AssignmentRow.user_id,
                                            AssignmentRow.meta, AssignmentRow.created_at,
                                            AssignmentRow.finished_at)))
        users = list(s.execute(select(UserRow.id, UserRow.name, UserRow.roles, UserRow.active).order_by(UserRow.name)))
        verdicts = Counter(v for v, in s.execute(select(VerificationRow.verdict)))
        verified_items = set(s.scalars(select(VerificationRow.qa_item_id)))
        reviewed_items = set(s.scalars(select(ReviewRow.qa_item_id)))
        authored = dict(s.execute(select(QAItemRow.author_id, func.count(QAItemRow.id))
                                  .where(QAItemRow.author_id.is_not(None)).group_by(QAItemRow.author_id)).all())

    status = Counter(st for _, st, _, _ in items)
    by_origin: dict[str, Counter[str]] = defaultdict(Counter)
    for origin, st, _, _ in items:
        by_origin[origin][st] += 1
    steps: dict[str, Counter[str]] = defaultdict(Counter)
    skips: dict[str, Counter[str]] = defaultdict(Counter)
    per_user: dict[int, Counter[str]] = defaultdict(Counter)
    hours: dict[int, float] = defaultdict(float)
    finished: list[datetime] = []
    for step, st, uid, meta, created, done in assignments:
        steps[step][st] += 1
        per_user[uid][f"{step}_{st}"] += 1
        if st == "skipped":
            skips[step][str((meta or {}).get("reason", ""))] += 1
        if st == "submitted":
            hours[uid] += _hours(created, done)
            if done is not None:
                finished.append(aware(done))  # type: ignore[arg-type]
    people = []
    for uid, name, roles, active in users:
        c = per_user[uid]
        submitted = sum(n for k, n in c.items() if k.endswith("_submitted"))
        people.append({
            "id": uid, "name": name, "roles": list(roles or []), "active": active,
            "authored": int(authored.get(uid, 0)), "verified": c["verify_submitted"],
            "reviewed": c["review_submitted"], "tagged": c["error_submitted"],
            "skipped": sum(n for k, n in c.items() if k.endswith("_skipped")),
            "open": sum(n for k, n in c.items() if k.endswith("_open")),
            "submitted": submitted, "items_per_hour": (submitted / hours[uid]) if hours[uid] > 0 else None,
        })
    span = _hours(min(finished), now) if finished else 0.0
    decided = status["accepted"] + status["discarded"]
    ever_revised = sum(1 for _, st, meta, _ in items if st == "revise" or int((meta or {}).get("verify_round", 1)) > 1
                       or int((meta or {}).get("review_start", 1)) > 1)
    judged = len(verified_items | reviewed_items)
    return {
        "items": dict(status), "by_origin": {k: dict(v) for k, v in by_origin.items()},
        "steps": {k: dict(v) for k, v in steps.items()},
        "people": people,
        "throughput": {"last_hour": sum(1 for t in finished if t >= now - timedelta(hours=1)),
                       "per_hour": (len(finished) / span) if span > 0 else None,
                       "submissions": len(finished)},
        "rates": {"verification_match": _ratio(verdicts["match"], sum(verdicts.values())),
                  "accepted": _ratio(status["accepted"], decided), "discarded": _ratio(status["discarded"], decided),
                  "revised": _ratio(ever_revised, judged)},
        "verifications": dict(verdicts),
        "skip_reasons": {k: dict(v) for k, v in skips.items()},
        "alpha": review_alpha(db),
        "errors": error_breakdown(db),
        "stuck": stuck_items(db, config or WorkflowConfig()),
    }
