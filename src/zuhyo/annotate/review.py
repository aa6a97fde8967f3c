"""Expert review rounds (DomainCQA §3.3 and §4.3): each drafted QA item is judged Valid or Flawed by two distinct,
randomly drawn experts; agreement decides (both Valid → accepted, both Flawed → revise or discard), a disagreement
adds a round with another expert until consensus (``GateConfig.consensus_margin``); every round is kept in
``reviews``. Which items are reviewed is their protocol's business (:mod:`zuhyo.construct.qa.gates`: ``domaincqa``;
a hakusho draft is never reviewed). When a revision has gone ``rounds_before_adjudication`` rounds without
consensus, or no eligible expert is left for the next round, the item goes to an admin's ruling
(``adjudicating``, :mod:`zuhyo.annotate.adjudicate`) instead of waiting for ever.

Rounds per item are counted in ``qa_items.meta``: ``review_round`` (the current round) and ``review_start`` (the
first round of the current revision: a revised item is reviewed afresh, by two experts again, and only ratings of
its current revision count towards consensus).
"""

from __future__ import annotations

import random
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.annotate.assign_base import (
    acknowledge,
    aware,
    claim,
    current_open,
    expire_stale,
    figure_view,
    new_assignment,
    open_flags,
    qa_item,
    record_shown,
    set_assignment,
    transact,
)
from zuhyo.annotate.users import require
from zuhyo.annotate.workflow import ReviewTask, SubmitResult, WorkflowConfig, WorkflowError
from zuhyo.construct.qa.gates import Evidence, consensus, gather_evidence, review_excluded, review_matrix
from zuhyo.construct.qa.items import grading_view, log_action, update_qa_item
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import utcnow
from zuhyo.construct.workspace.qa_tables import AssignmentRow, QAItemRow, ReviewRow, UserRow

DEFAULT_CONFIG = WorkflowConfig()
RATINGS = ("valid", "flawed")
#: The two criteria DomainCQA §4.3 had its experts rate (the paper prints no scale; zuhyo uses 1-5, ordinal).
ASPECTS = ("domain_relevance", "answer_accuracy")
ASPECT_SCALE = range(1, 6)


def _rounds(item: QAItemRow) -> tuple[int, int]:
    meta = item.meta or {}
    current = int(meta.get("review_round", 1))
    return current, int(meta.get("review_start", current))


def _slots(item: QAItemRow, config: WorkflowConfig) -> int:
    current, start = _rounds(item)
    return config.gates.experts_per_round if current == start else 1


def _candidates(s: Session, config: WorkflowConfig, ids: list[int] | None = None) -> list[QAItemRow]:
    """Items in review, and drafts of the domaincqa protocol not yet in review (a hakusho draft only ever
    reaches people as an author's starting point)."""
    query = select(QAItemRow).where(QAItemRow.status.in_(("reviewing", "draft")))
    if ids is not None:
        query = query.where(QAItemRow.id.in_(ids))
    return [item for item in s.scalars(query.order_by(QAItemRow.id))
            if item.status == "reviewing" or config.gates.protocol_of(item.origin, item.style) == "domaincqa"]


def _free_slots(s: Session, item: QAItemRow, config: WorkflowConfig) -> list[int]:
    current, _ = _rounds(item)
    taken = set(s.scalars(select(AssignmentRow.slot).where(
        AssignmentRow.step == "review", AssignmentRow.target_key == f"qa/{item.id}", AssignmentRow.round == current,
        AssignmentRow.status.in_(("open", "submitted")))))
    return [slot for slot in range(_slots(item, config)) if slot not in taken]


def _excluded(s: Session, item: QAItemRow, evidence: Evidence | None = None) -> set[int]:
    """Experts who may not take this item now: who is not independent of it (:func:`review_excluded`: author,
    revisers, shown the reference outside a review, rated this revision), and whoever holds or skipped it since
    its current revision's first round (so a later round always gets *another* expert)."""
    _, start = _rounds(item)
    out = {u for u, in s.execute(select(AssignmentRow.user_id).where(
        AssignmentRow.step == "review", AssignmentRow.target_key == f"qa/{item.id}", AssignmentRow.round >= start,
        AssignmentRow.status.in_(("open", "submitted", "skipped"))))}
    ev = evidence if evidence is not None else gather_evidence(s, [item.id])[item.id]
    return out | review_excluded(item, ev)


def _assign(s: Session, item: QAItemRow, expert: UserRow, slot: int, config: WorkflowConfig) -> AssignmentRow:
    now = utcnow()
    if item.status == "draft":
        meta = {**(item.meta or {}), "flow": "review", "review_round": 1, "review_start": 1}
        update_qa_item(s, item, actor=expert.name, user_id=expert.id, action="review_start", status="reviewing",
                       meta=meta)
    current, _ = _rounds(item)
    return new_assignment(s, step="review", target_key=f"qa/{item.id}", user=expert, now=now,
                          ttl_s=config.assignment_ttl.total_seconds(), round_=current, slot=slot,
                          figure_id=item.figure_id, qa_item_id=item.id, meta={"item_revision": item.revision})


def _experts(s: Session) -> list[UserRow]:
    return [u for u in s.scalars(select(UserRow).where(UserRow.active.is_(True)).order_by(UserRow.id))
            if "expert" in (u.roles or [])]


def assign_reviews(db: Database, rng: random.Random, *, config: WorkflowConfig = DEFAULT_CONFIG,
                   qa_item_ids: list[int] | None = None) -> int:
    """Draw experts at random (``rng``; seed it for a reproducible draw) for every drafted item that needs
    reviewers in its current round — two distinct experts in a first round, one more after a disagreement —
    never its author nor an expert who already rated or holds it; returns how many assignments were made.
    Items for which too few experts are left keep their free slots (see :func:`zuhyo.annotate.dashboard`)."""

    def work(s: Session) -> int:
        expire_stale(s, utcnow())
        experts = _experts(s)
        made = 0
        candidates = _candidates(s, config, qa_item_ids)
        evidence = gather_evidence(s, [i.id for i in candidates])
        for item in candidates:
            for slot in _free_slots(s, item, config):
                excluded = _excluded(s, item, evidence[item.id])
                pool = [u for u in experts if u.id not in excluded]
                if not pool:
                    break
                _assign(s, item, rng.choice(pool), slot, config)
                made += 1
        return made

    return transact(db, work)


def _review_task(s: Session, row: AssignmentRow, user: UserRow) -> ReviewTask:
    assert row.qa_item_id is not None
    item = qa_item(s, row.qa_item_id)
    record_shown(s, user, item, "review")
    return ReviewTask(assignment_id=row.id, qa_item_id=item.id, round=row.round, figure=figure_view(s, item.figure_id),
                      question=item.question, answer=item.answer, category=item.category, aspect=item.aspect,
                      expires_at=aware(row.expires_at), flags=open_flags(s, [item.id]), grading=grading_view(item),
                      grading_stale=bool((item.meta or {}).get("grading_stale")))


def next_review_task(db: Database, user_id: int, rng: random.Random | None = None, *,
                     config: WorkflowConfig = DEFAULT_CONFIG) -> ReviewTask | None:
    """The expert's open review assignment (the oldest); when there is none and ``rng`` is given, a new one on
    an item drawn at random among those that need a reviewer this expert has not been; else None."""

    def work(s: Session) -> ReviewTask | None:
        user = require(s, user_id, "expert")
        expire_stale(s, utcnow())
        held = current_open(s, user.id, "review")
        if held is not None:
            return _review_task(s, held, user)
        if rng is None:
            return None
        candidates = _candidates(s, config)
        evidence = gather_evidence(s, [i.id for i in candidates])  # one query per table, not per item
        open_items = [(item, slots) for item in candidates if (slots := _free_slots(s, item, config))
                      and user.id not in _excluded(s, item, evidence[item.id])]
        if not open_items:
            return None
        item, slots = rng.choice(open_items)
        return _review_task(s, _assign(s, item, user, slots[0], config), user)

    return transact(db, work)


def _decide(s: Session, item: QAItemRow, config: WorkflowConfig) -> tuple[str, str | None]:
    """After a round completes: (outcome, reason) from the ratings of the current revision; ``adjudicating``
    when the revision has had ``rounds_before_adjudication`` rounds, or no expert is left for another."""
    current, start = _rounds(item)
    ratings = list(s.scalars(select(ReviewRow.rating).where(ReviewRow.qa_item_id == item.id,
                                                            ReviewRow.item_revision == item.revision,
                                                            ReviewRow.round >= start)))
    valid, flawed = ratings.count("valid"), ratings.count("flawed")
    decided = consensus(valid, flawed, config.gates.consensus_margin)
    if decided == "valid":
        return "accepted", None
    if decided == "flawed":
        return "revise", f"experts rated it flawed ({flawed} of {len(ratings)})"
    if current - start + 1 >= config.gates.rounds_before_adjudication:
        return "adjudicating", (f"no consensus after {current - start + 1} review rounds ({valid} valid, "
                                f"{flawed} flawed): an admin rules")
    excluded = _excluded(s, item)
    if not any(u.id not in excluded for u in _experts(s)):
        return "adjudicating", (f"no consensus ({valid} valid, {flawed} flawed) and no expert left who has not "
                                "rated it: an admin rules")
    return "next_round", None


def submit_review(db: Database, user_id: int, assignment_id: int, rating: str, submit_key: str,
                  comment: str | None = None, correction: dict[str, str] | None = None, *,
                  aspects: dict[str, int] | None = None, config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Record a Valid / Flawed rating (with a comment and an optional corrected question/answer). When the
    round's last rating is in: consensus Valid → ``accepted``; consensus Flawed → ``revise`` (an admin revises or
    discards it); disagreement → the next round, with another expert (``reviewing``), or an admin's ruling
    (``adjudicating``) after ``rounds_before_adjudication`` rounds or when no expert is left."""
    rating = (rating or "").strip().lower()
    if rating not in RATINGS:
        raise WorkflowError(f"rating must be valid or flawed (got {rating!r})")
    for name, value in (aspects or {}).items():
        if name not in ASPECTS or value not in ASPECT_SCALE:
            raise WorkflowError(f"aspect ratings are {', '.join(ASPECTS)} from 1 to 5 (got {name}={value!r})")
    fix: dict[str, str] | None = None
    if correction:
        unknown = set(correction) - {"question", "answer"}
        if unknown:
            raise WorkflowError(f"a correction has only question and answer (got {', '.join(sorted(unknown))})")
        fix = {k: v.strip() for k, v in correction.items() if v and v.strip()} or None

    def work(s: Session) -> SubmitResult:
        claimed = claim(s, user_id, submit_key, assignment_id, "review", "expert")
        if isinstance(claimed, SubmitResult):
            return claimed
        user, row = claimed
        assert row.qa_item_id is not None
        item = qa_item(s, row.qa_item_id)
        current, _ = _rounds(item)
        if item.status != "reviewing" or row.round != current:
            raise WorkflowError(f"QA item {item.id} is no longer in review round {row.round}")
        s.add(ReviewRow(qa_item_id=item.id, round=row.round, item_revision=item.revision, user_id=user.id,
                        rating=rating, comment=(comment or "").strip() or None, correction=fix,
                        meta={"assignment_id": row.id, **({"aspects": dict(aspects)} if aspects else {})},
                        created_at=utcnow()))
        set_assignment(s, row, "submitted", actor=user.name, user_id=user.id)
        log_action(s, actor=user.name, user_id=user.id, action="review_rating", target_type="qa_item",
                   target_id=item.id, after={"round": row.round, "rating": rating, "comment": comment,
                                             "correction": fix})
        s.flush()
        submitted = s.scalars(select(AssignmentRow.id).where(
            AssignmentRow.step == "review", AssignmentRow.target_key == f"qa/{item.id}",
            AssignmentRow.round == current, AssignmentRow.status == "submitted")).all()
        outcome = "reviewing"
        if len(submitted) >= _slots(item, config):
            outcome, reason = _decide(s, item, config)
            if outcome == "next_round":
                update_qa_item(s, item, actor=user.name, user_id=user.id, action="review_next_round",
                               meta={**(item.meta or {}), "review_round": current + 1})
            elif outcome == "adjudicating":
                update_qa_item(s, item, actor=user.name, user_id=user.id, action="review_to_adjudication",
                               status="adjudicating", reason=reason, meta={**(item.meta or {}), "flow": "review"})
            else:
                update_qa_item(s, item, actor=user.name, user_id=user.id, action=f"review_{outcome}",
                               status=outcome, reason=reason)
        return acknowledge(s, user, SubmitResult(key=submit_key, step="review", outcome=outcome,
                                                 assignment_id=row.id, qa_item_id=item.id, item_status=item.status,
                                                 verdict=rating))

    return transact(db, work)


def review_alpha(db: Database) -> dict[str, Any]:
    """Krippendorff's α (nominal) of the expert ratings (DomainCQA §4.3 reports it for its expert studies):
    ``{"overall": {...}, "rounds": {round: {...}}}``, each ``{"alpha", "ci95", "coders", "units", "ratings"}``
    (``ci95``: the bootstrap 95 % interval, seed 0, :func:`zuhyo.agreement.alpha_summary`).

    Overall, a unit is one revision of an item and its coders every expert who rated it in any round; per round,
    only that round's ratings (a later round has one rating per item, so its α is None: nothing to pair).
    """
    from zuhyo.agreement import alpha_summary

    with db.read() as s:
        rows = [r for r in s.execute(select(ReviewRow.qa_item_id, ReviewRow.item_revision, ReviewRow.round,
                                            ReviewRow.user_id, ReviewRow.rating, ReviewRow.meta))
                if not (r.meta or {}).get("adjudication")]  # an admin's ruling is not a coder's rating

    def summary(selected: list[Any]) -> dict[str, Any]:
        matrix, coders, units = review_matrix(selected)
        if coders < 2 or not units:
            return {"alpha": None, "ci95": None, "coders": coders, "units": units, "ratings": len(selected)}
        result = alpha_summary(matrix, "nominal", n_boot=1000, seed=0)  # bootstrap CI (Hayes & Krippendorff)
        return {"alpha": result["alpha"], "ci95": result["ci95"], "coders": coders, "units": units,
                "ratings": len(selected)}

    return {"overall": summary(rows),
            "rounds": {rnd: summary([r for r in rows if r.round == rnd]) for rnd in sorted({r.round for r in rows})},
            "aspects": {name: aspect_summary(rows, name) for name in ASPECTS
                        if any(name in ((r.meta or {}).get("aspects") or {}) for r in rows)}}


def aspect_summary(rows: list[Any], name: str) -> dict[str, Any]:
    """α (ordinal) with its bootstrap 95 % CI of one DomainCQA §4.3 aspect over the ratings that gave it."""
    from zuhyo.agreement import alpha_summary

    def value(r: Any) -> float | None:
        given = ((r.meta or {}).get("aspects") or {}).get(name)
        return None if given is None else float(given)

    matrix, coders, units = review_matrix(rows, value)
    result = alpha_summary(matrix, "ordinal", n_boot=1000, seed=0) if coders >= 2 and units else {
        "alpha": None, "ci95": None}
    return {"alpha": result["alpha"], "ci95": result["ci95"], "coders": coders, "units": units,
            "ratings": sum(value(r) is not None for r in rows)}
