"""What every workflow transaction shares: idempotent submit keys, the hand-out lock, expiry of stale
assignments, ownership checks and the views of figures and flags."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.annotate.users import require
from zuhyo.annotate.workflow import Conflict, FigureView, FlagView, NotFound, SubmitResult, WorkflowError
from zuhyo.construct.qa.gates import SHOWN_ACTION
from zuhyo.construct.qa.items import log_action, update_qa_item
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import aware, utcnow  # noqa: F401 - aware: re-exported for the workflow
from zuhyo.construct.workspace.qa_tables import ActionRow, AssignmentRow, QAFlag, QAItemRow, SubmissionRow, UserRow
from zuhyo.construct.workspace.tables import Document, FigureRow, Source

T = TypeVar("T")
#: Whole-transaction retries when a concurrent writer wins a unique-constraint race (PostgreSQL).
ATTEMPTS = 12
#: Any fixed number: the PostgreSQL advisory lock that serialises workflow transactions (see :func:`transact`).
_PG_WORKFLOW_LOCK = 7_240_612
MAX_KEY_CHARS = 100


def transact(db: Database, work: Callable[[Session], T]) -> T:
    """``work`` in one write transaction, re-run from scratch when it lost a unique-constraint race.

    On PostgreSQL the transaction first takes a transaction-scoped advisory lock shared by every workflow
    transaction, so they run one at a time as SQLite's ``BEGIN IMMEDIATE`` makes them: under READ COMMITTED two
    statements of one hand-out could otherwise see a submission half-way (the assignment already submitted, the
    item not yet there) and hand the same figure to a second author.
    """

    def locked(s: Session) -> T:
        if s.get_bind().dialect.name == "postgresql":
            s.connection().exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_WORKFLOW_LOCK})")
        return work(s)

    return db.write_retrying(locked, attempts=ATTEMPTS)


def check_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_CHARS:
        raise WorkflowError(f"submit key must be 1 to {MAX_KEY_CHARS} characters (got {len(key or '')})")


def replay(s: Session, key: str, user_id: int) -> SubmitResult | None:
    """The stored result of an earlier submission with ``key`` (a retry), or None for a new key."""
    check_key(key)
    row = s.scalars(select(SubmissionRow).where(SubmissionRow.key == key)).one_or_none()
    if row is None:
        return None
    if row.user_id != user_id:
        raise Conflict(f"submit key {key!r} was already used by another user")
    return SubmitResult.from_json(dict(row.result), replayed=True)


def acknowledge(s: Session, user: UserRow, result: SubmitResult) -> SubmitResult:
    """Store the result under its key: from now on a retry is answered with it."""
    s.add(SubmissionRow(key=result.key, user_id=user.id, step=result.step, assignment_id=result.assignment_id,
                        result=result.to_json(), created_at=utcnow()))
    s.flush()
    return result


def expire_stale(s: Session, now: datetime) -> int:
    """Release open assignments past their expiry; an item waiting on an expired verification goes back to
    ``authored``. Returns how many were released."""
    stale = list(s.scalars(select(AssignmentRow).where(AssignmentRow.status == "open",
                                                       AssignmentRow.expires_at.is_not(None),
                                                       AssignmentRow.expires_at < now)))
    for row in stale:
        set_assignment(s, row, "released", actor="zuhyo expiry", user_id=None, reason="expired")
        if row.step == "verify" and row.qa_item_id is not None:
            item = s.get(QAItemRow, row.qa_item_id)
            if item is not None and item.status == "verifying":
                update_qa_item(s, item, actor="zuhyo expiry", action="verify_expired", status="authored")
    return len(stale)


def set_assignment(s: Session, row: AssignmentRow, status: str, *, actor: str, user_id: int | None,
                   reason: str | None = None) -> None:
    """Move an assignment to ``status`` (logged with before and after)."""
    before = {"status": row.status}
    row.status = status
    row.finished_at = utcnow()
    if reason is not None:
        row.meta = {**(row.meta or {}), "reason": reason}
    after: dict[str, Any] = {"status": status}
    if reason is not None:
        after["reason"] = reason
    log_action(s, actor=actor, user_id=user_id, action=f"assignment_{status}", target_type="assignment",
               target_id=row.id, before=before, after=after)


def own_open_assignment(s: Session, user: UserRow, assignment_id: int, step: str | None = None) -> AssignmentRow:
    """The user's open assignment ``assignment_id``, else NotFound / Conflict. Another user's assignment is
    NotFound, worded as one that does not exist, so that ids cannot be probed for whose work they are."""
    row = s.get(AssignmentRow, assignment_id)
    if row is None or (step is not None and row.step != step) or row.user_id != user.id:
        raise NotFound(f"assignment {assignment_id}: you have no such {step or ''} assignment".replace("  ", " "))
    if row.status != "open":
        raise Conflict(f"assignment {assignment_id} is {row.status}, no longer open")
    return row


def claim(s: Session, user_id: int, submit_key: str, assignment_id: int, step: str | None,
          role: str | None = None) -> tuple[UserRow, AssignmentRow] | SubmitResult:
    """Who submits for which assignment — or, for a key already acknowledged, the stored result.

    The key is looked up *before* the assignment: a first submission closed the assignment, so a retry would
    otherwise be refused as no longer open instead of being answered.
    """
    user = require(s, user_id, role)
    done = replay(s, submit_key, user.id)
    if done is not None:
        return done
    return user, own_open_assignment(s, user, assignment_id, step)


def current_open(s: Session, user_id: int, step: str) -> AssignmentRow | None:
    """The user's open assignment of ``step`` (the oldest), if any."""
    return s.scalars(select(AssignmentRow).where(AssignmentRow.user_id == user_id, AssignmentRow.step == step,
                                                 AssignmentRow.status == "open")
                     .order_by(AssignmentRow.id).limit(1)).one_or_none()


def new_assignment(s: Session, *, step: str, target_key: str, user: UserRow, now: datetime, ttl_s: float,
                   round_: int = 1, slot: int = 0, figure_id: int | None = None, qa_item_id: int | None = None,
                   meta: dict[str, Any] | None = None) -> AssignmentRow:
    """Insert a live assignment (the partial unique index refuses a second live one for the same work)."""
    from datetime import timedelta

    row = AssignmentRow(step=step, target_key=target_key, figure_id=figure_id, qa_item_id=qa_item_id, round=round_,
                        slot=slot, user_id=user.id, status="open", meta=dict(meta or {}), created_at=now,
                        expires_at=now + timedelta(seconds=ttl_s))
    s.add(row)
    s.flush()
    log_action(s, actor=user.name, user_id=user.id, action="assignment_open", target_type="assignment",
               target_id=row.id, after={"step": step, "target": target_key, "round": round_, "slot": slot})
    return row


def figure_view(s: Session, figure_id: int, *, blind: bool = False) -> FigureView:
    """The figure as a person sees it; ``blind`` leaves out caption, context and page (blind verification)."""
    fig = s.get(FigureRow, figure_id)
    if fig is None:
        raise NotFound(f"figure {figure_id}: no such figure")
    if blind:
        return FigureView(figure_id=fig.id, sha256=fig.sha256, mime=fig.mime, width=fig.width, height=fig.height)
    doc = s.get(Document, fig.document_id)
    src = s.get(Source, doc.source_id) if doc is not None else None
    return FigureView(figure_id=fig.id, sha256=fig.sha256, mime=fig.mime, width=fig.width, height=fig.height,
                      caption=fig.caption, context=list(fig.context or []), page_url=fig.page_url,
                      source=(src.title or src.locator) if src is not None else None)


def open_flags(s: Session, qa_item_ids: Iterable[int]) -> list[FlagView]:
    ids = list(qa_item_ids)
    if not ids:
        return []
    rows = s.scalars(select(QAFlag).where(QAFlag.qa_item_id.in_(ids), QAFlag.status == "open").order_by(QAFlag.id))
    return [FlagView(flag_id=r.id, qa_item_id=r.qa_item_id, kind=r.kind, detail=r.detail,
                     evidence=dict(r.evidence or {})) for r in rows]


def qa_item(s: Session, qa_item_id: int) -> QAItemRow:
    row = s.get(QAItemRow, qa_item_id)
    if row is None:
        raise NotFound(f"QA item {qa_item_id}: no such item")
    return row


def non_empty(value: str, what: str) -> str:
    text = (value or "").strip()
    if not text:
        raise WorkflowError(f"{what} must not be empty")
    return text


def record_shown(s: Session, user: UserRow, item: QAItemRow, page: str) -> None:
    """Log that ``page`` showed ``user`` the reference answer of ``item`` (once per user, item and page): from
    then on they are not independent of it (:func:`zuhyo.construct.qa.gates.exposure`)."""
    known = {str((after or {}).get("page")) for after in s.scalars(select(ActionRow.after).where(
        ActionRow.action == SHOWN_ACTION, ActionRow.target_type == "qa_item", ActionRow.target_id == item.id,
        ActionRow.user_id == user.id))}
    if page not in known:
        log_action(s, actor=user.name, user_id=user.id, action=SHOWN_ACTION, target_type="qa_item",
                   target_id=item.id, after={"page": page, "revision": item.revision})
