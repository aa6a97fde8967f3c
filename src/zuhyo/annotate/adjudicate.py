"""Adjudication (zuhyo's addition to both papers' workflows) and the items nobody can move on.

- **Blind verification.** When the judge calls a verifier's answer a mismatch or cannot decide (``7`` against
  ``seven``), the item waits in ``adjudicating``: an admin who neither wrote, revised nor answered it, or a third
  annotator who has never seen its reference, sees both answers and rules *same* (the answer counts as a match:
  method ``adjudicated``) or *different* (back to the author for revision), with a reason.
- **Expert review.** After ``rounds_before_adjudication`` rounds without consensus, or when no expert is left
  who has not rated the revision (two experts who disagree), an admin independent of the item rules *valid*
  (accepted) or *flawed* (revise). Items stuck earlier (a first round with fewer experts than slots) can be
  ruled on the same way.

Every ruling is stored with who made it, when and why (on the verification or as a review row marked
``adjudication``) and logged in ``actions``; :func:`stuck_items` lists what is waiting for a person who does not
exist, for the dashboard and ``zuhyo status``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.annotate.assign_base import (
    acknowledge,
    figure_view,
    non_empty,
    qa_item,
    record_shown,
    replay,
    set_assignment,
    transact,
)
from zuhyo.annotate.users import require
from zuhyo.annotate.workflow import (
    Conflict,
    FigureView,
    NotAllowed,
    ReviewView,
    SubmitResult,
    VerificationView,
    WorkflowConfig,
    WorkflowError,
)
from zuhyo.construct.qa.gates import Evidence, exposure, gather_evidence, passing_verifications
from zuhyo.construct.qa.items import log_action, update_qa_item
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import utcnow
from zuhyo.construct.workspace.qa_tables import AssignmentRow, QAItemRow, ReviewRow, UserRow, VerificationRow

DEFAULT_CONFIG = WorkflowConfig()
RULINGS = {"verify": ("same", "different"), "review": ("valid", "flawed")}


@dataclass(frozen=True)
class AdjudicationTask:
    """Rule on one item: the reference and what the verifier or the experts said."""

    qa_item_id: int
    flow: str
    """``verify`` (rule same / different) or ``review`` (rule valid / flawed)."""
    figure: FigureView
    question: str
    answer: str
    reason: str
    choices: tuple[str, str]
    verification: VerificationView | None = None
    """The blind answer being ruled on (verification flow)."""
    judge_reason: str = ""
    reviews: list[ReviewView] = field(default_factory=list)
    """The current revision's ratings (review flow)."""


def _flow(item: QAItemRow) -> str:
    return "review" if (item.meta or {}).get("flow") == "review" or item.status in ("reviewing", "draft") else "verify"


def _open_review_slots(s: Session, item: QAItemRow, config: WorkflowConfig) -> tuple[int, int]:
    """(free slots of the current round, open assignments) of an item that waits for experts."""
    from zuhyo.annotate.review import _free_slots

    live = s.scalar(select(AssignmentRow.id).where(
        AssignmentRow.step == "review", AssignmentRow.target_key == f"qa/{item.id}",
        AssignmentRow.status == "open").limit(1))
    return len(_free_slots(s, item, config)), int(live is not None)


def _active_people(s: Session) -> list[UserRow]:
    """Everyone who may be handed work (read once per call, not per item)."""
    return list(s.scalars(select(UserRow).where(UserRow.active.is_(True)).order_by(UserRow.id)))


def _with_role(people: list[UserRow], role: str) -> list[UserRow]:
    return [u for u in people if role in (u.roles or [])]


def _may_adjudicate(user: UserRow, item: QAItemRow, ev: Evidence, flow: str) -> bool:
    """An admin who neither wrote, revised nor answered (or rated) the item; for a blind match also a third
    annotator never shown its reference (the adjudication page itself aside: it is where they rule)."""
    roles = set(user.roles or [])
    why = exposure(item, ev).get(user.id, set())
    if flow == "review":
        rated = any(r.user_id == user.id and r.item_revision == item.revision for r in ev.reviews)
        return "admin" in roles and not why & {"author", "reviser"} and not rated
    if "admin" in roles and not why & {"author", "reviser", "verifier"}:
        return True
    shown_elsewhere = ev.shown.get(user.id, set()) - {"adjudicate"}
    return "annotator" in roles and why <= {"shown"} and not shown_elsewhere


def _stuck_review(s: Session, item: QAItemRow, ev: Evidence, config: WorkflowConfig,
                  people: list[UserRow]) -> str | None:
    from zuhyo.annotate.review import _excluded

    if item.status == "draft" and config.gates.protocol_of(item.origin, item.style) != "domaincqa":
        return None
    free, live = _open_review_slots(s, item, config)
    if not free or live:
        return None
    excluded = _excluded(s, item, ev)
    eligible = [u for u in _with_role(people, "expert") if u.id not in excluded]
    if len(eligible) < free:
        return (f"needs {free} more expert(s) this round, {len(eligible)} eligible (authors, revisers and raters "
                "of this revision are not)")
    return None


def _stuck(s: Session, item: QAItemRow, ev: Evidence, config: WorkflowConfig, people: list[UserRow]) -> str | None:
    """Why ``item`` waits for a person who does not exist, or None."""
    if item.status == "authored":
        skipped = set(s.scalars(select(AssignmentRow.user_id).where(
            AssignmentRow.step == "verify", AssignmentRow.qa_item_id == item.id, AssignmentRow.status == "skipped")))
        exposed = exposure(item, ev)
        if not [u for u in _with_role(people, "annotator") if u.id not in exposed and u.id not in skipped]:
            return "no annotator left who is independent of it for blind verification"
        return None
    if item.status in ("reviewing", "draft"):
        return _stuck_review(s, item, ev, config, people)
    if item.status == "adjudicating":
        flow = _flow(item)
        if not any(_may_adjudicate(u, item, ev, flow) for u in people):
            return "no admin or annotator independent of it to adjudicate"
    return None


def stuck_items(db: Database, config: WorkflowConfig = DEFAULT_CONFIG) -> list[dict[str, Any]]:
    """Items waiting for a verifier, expert or adjudicator who does not exist (too few people, everyone
    excluded): ``[{"qa_item_id", "status", "reason"}]``."""
    with db.read() as s:
        items = list(s.scalars(select(QAItemRow).where(
            QAItemRow.status.in_(("authored", "reviewing", "draft", "adjudicating"))).order_by(QAItemRow.id)))
        evidence = gather_evidence(s, [i.id for i in items])
        people = _active_people(s)
        out = []
        for item in items:
            reason = _stuck(s, item, evidence[item.id], config, people)
            if reason:
                out.append({"qa_item_id": item.id, "status": item.status, "reason": reason})
        return out


def _adjudicable(s: Session, user: UserRow, config: WorkflowConfig) -> list[tuple[QAItemRow, str, str]]:
    items = list(s.scalars(select(QAItemRow).where(
        QAItemRow.status.in_(("adjudicating", "reviewing", "draft"))).order_by(QAItemRow.id)))
    evidence = gather_evidence(s, [i.id for i in items])
    people = _active_people(s)
    out = []
    for item in items:
        ev = evidence[item.id]
        if item.status == "adjudicating":
            reason = item.reason or "waiting for a ruling"
        else:
            stuck = _stuck_review(s, item, ev, config, people)
            if stuck is None:
                continue
            reason = stuck
        flow = _flow(item)
        if _may_adjudicate(user, item, ev, flow):
            out.append((item, flow, reason))
    return out


def list_adjudications(db: Database, user_id: int, config: WorkflowConfig = DEFAULT_CONFIG
                       ) -> list[dict[str, Any]]:
    """Items this user may rule on: ``[{"qa_item_id", "flow", "reason"}]`` (no reference: the list is blind)."""
    with db.read() as s:
        user = require(s, user_id)
        return [{"qa_item_id": item.id, "flow": flow, "reason": reason}
                for item, flow, reason in _adjudicable(s, user, config)]


def _find(s: Session, user: UserRow, qa_item_id: int, config: WorkflowConfig) -> tuple[QAItemRow, str, str]:
    for item, flow, reason in _adjudicable(s, user, config):
        if item.id == qa_item_id:
            return item, flow, reason
    item = qa_item(s, qa_item_id)
    if item.status not in ("adjudicating", "reviewing", "draft"):
        raise Conflict(f"QA item {item.id} is {item.status}, not waiting for a ruling")
    raise NotAllowed(f"QA item {item.id}: you may not rule on it (an admin or an annotator independent of it "
                     "may)")


def _current_verification(s: Session, item: QAItemRow) -> VerificationRow | None:
    return s.scalars(select(VerificationRow).where(VerificationRow.qa_item_id == item.id,
                                                   VerificationRow.item_revision == item.revision)
                     .order_by(VerificationRow.id.desc()).limit(1)).one_or_none()


def get_adjudication(db: Database, user_id: int, qa_item_id: int,
                     config: WorkflowConfig = DEFAULT_CONFIG) -> AdjudicationTask:
    """The item to rule on, with both answers (verification) or the ratings (review); recorded as having shown
    this user the reference."""

    def work(s: Session) -> AdjudicationTask:
        user = require(s, user_id)
        item, flow, reason = _find(s, user, qa_item_id, config)
        record_shown(s, user, item, "adjudicate")
        task = AdjudicationTask(qa_item_id=item.id, flow=flow, figure=figure_view(s, item.figure_id),
                                question=item.question, answer=item.answer, reason=reason,
                                choices=RULINGS[flow])  # type: ignore[arg-type]
        if flow == "verify":
            v = _current_verification(s, item)
            if v is None:
                raise Conflict(f"QA item {item.id} has no blind answer of revision {item.revision} to rule on")
            return AdjudicationTask(**{**task.__dict__, "verification": VerificationView(
                round=v.round, item_revision=v.item_revision, user_id=v.user_id, answer=v.answer,
                verdict=v.verdict, judge=v.judge), "judge_reason": str((v.judgment or {}).get("reason", ""))})
        reviews = s.scalars(select(ReviewRow).where(ReviewRow.qa_item_id == item.id,
                                                    ReviewRow.item_revision == item.revision).order_by(ReviewRow.id))
        return AdjudicationTask(**{**task.__dict__, "reviews": [
            ReviewView(round=r.round, item_revision=r.item_revision, user_id=r.user_id, rating=r.rating,
                       comment=r.comment, correction=r.correction) for r in reviews]})

    return transact(db, work)


def submit_adjudication(db: Database, user_id: int, qa_item_id: int, ruling: str, reason: str, submit_key: str,
                        config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Record a ruling with its reason. Verification: *same* → the blind answer counts as a match (accepted once
    ``verifiers`` matched), *different* → ``revise``. Review: *valid* → ``accepted``, *flawed* → ``revise``."""
    ruling = (ruling or "").strip().lower()
    reason = non_empty(reason, "the reason for the ruling")

    def work(s: Session) -> SubmitResult:
        user = require(s, user_id)
        done = replay(s, submit_key, user.id)
        if done is not None:
            return done
        item, flow, _ = _find(s, user, qa_item_id, config)
        if ruling not in RULINGS[flow]:
            raise WorkflowError(f"QA item {item.id}: rule {' or '.join(RULINGS[flow])} (got {ruling!r})")
        record = {"ruling": ruling, "user_id": user.id, "reason": reason, "at": utcnow().isoformat()}
        if flow == "verify":
            v = _current_verification(s, item)
            if v is None:
                raise Conflict(f"QA item {item.id} has no blind answer of revision {item.revision} to rule on")
            v.meta = {**(v.meta or {}), "adjudication": record}
            s.flush()
            if ruling == "same":
                passed = len(passing_verifications(item, gather_evidence(s, [item.id])[item.id]))
                status, why = ("accepted" if passed >= config.gates.verifiers else "authored"), None
            else:
                status, why = "revise", f"adjudicated: the answers differ ({reason})"
            target = {"verification_id": v.id}
        else:
            current = int((item.meta or {}).get("review_round", 1))
            row = ReviewRow(qa_item_id=item.id, round=current, item_revision=item.revision, user_id=user.id,
                            rating=ruling, comment=reason, meta={"adjudication": record}, created_at=utcnow())
            s.add(row)
            s.flush()
            status = "accepted" if ruling == "valid" else "revise"
            why = None if status == "accepted" else f"adjudicated flawed ({reason})"
            target = {"review_id": row.id}
            for live in s.scalars(select(AssignmentRow).where(AssignmentRow.qa_item_id == item.id,
                                                              AssignmentRow.step == "review",
                                                              AssignmentRow.status == "open")):
                set_assignment(s, live, "released", actor=user.name, user_id=user.id, reason="item adjudicated")
        log_action(s, actor=user.name, user_id=user.id, action="adjudicate", target_type="qa_item",
                   target_id=item.id, after={**record, **target, "flow": flow})
        update_qa_item(s, item, actor=user.name, user_id=user.id, action=f"adjudicated_{ruling}", status=status,
                       reason=why, meta={**(item.meta or {}), "flow": flow})
        return acknowledge(s, user, SubmitResult(key=submit_key, step="adjudicate", outcome=status,
                                                 qa_item_id=item.id, item_status=status, verdict=ruling))

    return transact(db, work)
