"""The grading data of a QA item under people's review: answer kind, the axis range and scale that DomainCQA
Algorithm 3 scores numeric answers against, and the key points of the key-point judge.

A drafting model writes them (``zuhyo draft``); people see them on the review, revise and grading pages and
correct them here. A new answer makes them stale until someone checks them
(:func:`zuhyo.construct.qa.items.update_qa_item`), and the export refuses stale items.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.annotate.assign_base import acknowledge, qa_item, record_shown, replay, transact
from zuhyo.annotate.users import require
from zuhyo.annotate.workflow import NotAllowed, SubmitResult, WorkflowError
from zuhyo.construct.qa.items import has_grading, update_qa_item
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.qa_tables import QAItemRow

ANSWER_KINDS = ("numeric_retrieval", "numeric_exact", "open", "choice")
GRADING_FORM_FIELDS = ("answer_kind", "axis_min", "axis_max", "axis_scale", "key_points")
SCALES = ("linear", "log")


@dataclass(frozen=True)
class Grading:
    """Grading data as a form carries it."""

    answer_kind: str | None = None
    axis_min: float | None = None
    axis_max: float | None = None
    axis_scale: str = "linear"
    key_points: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, item: QAItemRow) -> Grading:
        axis = item.axis or {}
        return cls(answer_kind=item.answer_kind, axis_min=axis.get("min"), axis_max=axis.get("max"),
                   axis_scale=str(axis.get("scale") or "linear"), key_points=list(item.key_points or []))

    @classmethod
    def from_form(cls, form: dict[str, str]) -> Grading:
        """From text fields (``answer_kind``, ``axis_min``, ``axis_max``, ``axis_scale``, ``key_points`` one per
        line); a wrong value is one clear error."""
        kind = (form.get("answer_kind") or "").strip() or None
        if kind is not None and kind not in ANSWER_KINDS:
            raise WorkflowError(f"answer kind must be one of {', '.join(ANSWER_KINDS)} (got {kind!r})")
        bounds = []
        for name in ("axis_min", "axis_max"):
            text = (form.get(name) or "").strip().replace(",", "")
            try:
                value = float(text) if text else None
            except ValueError:
                raise WorkflowError(f"{name.replace('_', ' ')} must be a number (got {text!r})") from None
            if value is not None and not math.isfinite(value):
                raise WorkflowError(f"{name.replace('_', ' ')} must be a finite number")
            bounds.append(value)
        scale = (form.get("axis_scale") or "linear").strip()
        if scale not in SCALES:
            raise WorkflowError(f"axis scale must be linear or log (got {scale!r})")
        lo, hi = bounds
        if (lo is None) != (hi is None):
            raise WorkflowError("give both ends of the axis range, or neither")
        if lo is not None and hi is not None and not lo < hi:
            raise WorkflowError(f"the axis range must run from a smaller to a larger value (got {lo} to {hi})")
        if scale == "log" and lo is not None and lo <= 0:
            raise WorkflowError("a log axis starts above zero")
        if kind == "numeric_retrieval" and lo is None:
            raise WorkflowError("a numeric retrieval item needs its axis range (DomainCQA Algorithm 3)")
        points = [p.strip() for p in (form.get("key_points") or "").splitlines() if p.strip()]
        return cls(answer_kind=kind, axis_min=lo, axis_max=hi, axis_scale=scale, key_points=points)

    def fields(self) -> dict[str, Any]:
        axis = ({"min": self.axis_min, "max": self.axis_max, "scale": self.axis_scale}
                if self.axis_min is not None else None)
        return {"answer_kind": self.answer_kind, "axis": axis, "key_points": self.key_points}


def grading_changes(item: QAItemRow, grading: Grading | None, *, answer_changed: bool, confirmed: bool
                    ) -> tuple[dict[str, Any], bool]:
    """The column changes a revision makes to the grading data and whether it was checked; a new answer on an
    item with grading data needs the data edited or ``confirmed``, else a clear error."""
    changes = {k: v for k, v in grading.fields().items() if v != getattr(item, k)} if grading is not None else {}
    if answer_changed and has_grading(item) and not changes and not confirmed:
        raise WorkflowError(f"QA item {item.id}: the answer changed; check its grading data (answer kind, axis "
                            "range and scale, key points) and tick 'checked', or edit it")
    return changes, confirmed


def _may_grade(s: Session, user_id: int, item: QAItemRow) -> Any:
    user = require(s, user_id)
    roles = set(user.roles or [])
    if not (roles & {"admin", "expert"} or item.author_id == user.id):
        raise NotAllowed(f"QA item {item.id}: only an admin, an expert or its author may edit its grading data")
    return user


def stale_items(db: Database) -> list[int]:
    """Ids of the items whose grading data is stale (not checked since their answer changed)."""
    with db.read() as s:
        return [i.id for i in s.scalars(select(QAItemRow).order_by(QAItemRow.id))
                if (i.meta or {}).get("grading_stale")]


def get_grading(db: Database, user_id: int, qa_item_id: int) -> tuple[QAItemRow, Grading]:
    """The item (question, answer) and its grading data, for the grading page (which shows the reference)."""

    def work(s: Session) -> tuple[QAItemRow, Grading]:
        item = qa_item(s, qa_item_id)
        user = _may_grade(s, user_id, item)
        record_shown(s, user, item, "grading")
        s.expunge(item)
        return item, Grading.of(item)

    return transact(db, work)


def submit_grading(db: Database, user_id: int, qa_item_id: int, grading: Grading, submit_key: str) -> SubmitResult:
    """Save the grading data as the person left it: saving is the check (the stale mark is cleared)."""

    def work(s: Session) -> SubmitResult:
        item = qa_item(s, qa_item_id)
        user = _may_grade(s, user_id, item)
        done = replay(s, submit_key, user.id)
        if done is not None:
            return done
        changes = {k: v for k, v in grading.fields().items() if v != getattr(item, k)}
        update_qa_item(s, item, actor=user.name, user_id=user.id, action="grading", grading_confirmed=True,
                       **changes)
        return acknowledge(s, user, SubmitResult(key=submit_key, step="grading", outcome="graded",
                                                 qa_item_id=item.id, item_status=item.status))

    return transact(db, work)
