"""QA items in the workspace: the one way to add one, log what happened to it, and turn it into a :class:`Sample`.

Drafting (``zuhyo draft``), the audit, the annotation app and the export all go through these, so an item has the
same identity, history and evaluation form wherever it is touched. Callers pass an open write session
(:meth:`zuhyo.construct.workspace.db.Database.write`); nothing here commits.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.workspace.orm import iso_utc, utcnow
from zuhyo.construct.workspace.qa_tables import QA_STATUSES, ActionRow, QAItemRow
from zuhyo.construct.workspace.tables import FigureRow
from zuhyo.schema import AstroMeta, Flag, ImageRef, Sample, SourceInfo

#: The fields of a QA item that a revision can change and that the action log records before and after.
#: The fields that grade answers to an item (checked again whenever its answer changes).
GRADING_FIELDS = ("answer_kind", "axis", "key_points")
SNAPSHOT_FIELDS = ("question", "answer", "answer_kind", "options", "difficulty", "key_points", "axis", "status",
                   "reason", "revision", "category", "aspect")


def add_qa_item(s: Session, *, item_key: str, figure_id: int, origin: str, question: str, answer: str,
                status: str, actor: str, user_id: int | None = None, **fields: Any) -> tuple[QAItemRow, bool]:
    """The item with ``item_key``, added (and logged as ``create``) when it is not there yet.

    Returns ``(row, created)``. An existing item is returned untouched: re-running a stage adds nothing twice.
    """
    if status not in QA_STATUSES:
        raise ValueError(f"unknown QA status {status!r} (one of {', '.join(QA_STATUSES)})")
    row = s.scalars(select(QAItemRow).where(QAItemRow.item_key == item_key)).one_or_none()
    if row is not None:
        return row, False
    now = utcnow()
    row = QAItemRow(item_key=item_key, figure_id=figure_id, origin=origin, question=question, answer=answer,
                    status=status, created_at=now, updated_at=now, **fields)
    row.difficulty = list(row.difficulty or [])
    row.key_points = list(row.key_points or [])
    row.meta = dict(row.meta or {})
    s.add(row)
    s.flush()
    log_action(s, actor=actor, user_id=user_id, action="create", target_type="qa_item", target_id=row.id,
               after=snapshot(row))
    return row, True


def has_grading(row: QAItemRow) -> bool:
    """Whether the item carries data that grades answers to it (answer kind, axis range and scale for DomainCQA
    Algorithm 3, key points for the key-point judge)."""
    return bool(row.answer_kind or row.axis or row.key_points)


def grading_view(row: QAItemRow) -> dict[str, Any] | None:
    """The grading data as pages show it, or None for an item that has none and is not DomainCQA-style."""
    if not has_grading(row) and row.style != "astro":
        return None
    return {"answer_kind": row.answer_kind, "axis": dict(row.axis) if row.axis else None,
            "key_points": list(row.key_points or [])}


def update_qa_item(s: Session, row: QAItemRow, *, actor: str, action: str, user_id: int | None = None,
                   grading_confirmed: bool = False, **changes: Any) -> None:
    """Change an item's fields, bump its revision when question or answer change, and log before and after.

    A new answer on an item with grading data (:func:`has_grading`) marks that data stale (``meta.grading_stale``)
    unless the same change edits it or ``grading_confirmed`` says a person checked it; the export refuses items
    with stale grading data, so a revised answer is never graded by the old axis range or key points."""
    before = snapshot(row)
    if "status" in changes and changes["status"] not in QA_STATUSES:
        raise ValueError(f"unknown QA status {changes['status']!r}")
    text_changed = any(k in changes and changes[k] != getattr(row, k) for k in ("question", "answer"))
    grading_edited = any(k in changes and changes[k] != getattr(row, k) for k in GRADING_FIELDS)
    answer_changed = "answer" in changes and changes["answer"] != row.answer
    if grading_edited or grading_confirmed or (answer_changed and has_grading(row)):
        meta = dict(changes.get("meta", row.meta) or {})
        if grading_edited or grading_confirmed:
            meta.pop("grading_stale", None)
        else:
            meta["grading_stale"] = {"since_revision": (row.revision or 1) + 1, "old_answer": row.answer}
        changes["meta"] = meta
    for key, value in changes.items():
        setattr(row, key, value)
    if text_changed:
        row.revision = (row.revision or 1) + 1
    row.updated_at = utcnow()
    s.flush()
    log_action(s, actor=actor, user_id=user_id, action=action, target_type="qa_item", target_id=row.id,
               before=before, after=snapshot(row))


def snapshot(row: QAItemRow) -> dict[str, Any]:
    """The item's changeable fields, as the action log stores them."""
    return {name: getattr(row, name) for name in SNAPSHOT_FIELDS}


def log_action(s: Session, *, actor: str, action: str, target_type: str, target_id: int | None,
               before: dict[str, Any] | None = None, after: dict[str, Any] | None = None,
               user_id: int | None = None) -> ActionRow:
    """Append one row to the audit log (``actions``); rows are never changed or deleted."""
    row = ActionRow(user_id=user_id, actor=actor, action=action, target_type=target_type, target_id=target_id,
                    before=before, after=after, created_at=utcnow())
    s.add(row)
    return row


def qa_item_to_sample(row: QAItemRow, figure: FigureRow, image: ImageRef | None, *,
                      benchmark: str = "workspace") -> Sample:
    """The item as an evaluation :class:`Sample` (the export's rows, the audit's questions).

    Astro-style items carry :class:`AstroMeta` (category, aspect, axis for DomainCQA Algorithm 3, key points) so
    the astrochart judges score them as the paper does; Hakusho-style items carry their difficulty flags.
    """
    astro = None
    if row.style == "astro" and row.category:
        qa_type, _, category = row.category.partition("-")
        axis = row.axis or {}
        astro = AstroMeta.model_validate({
            "qa_type": qa_type, "category": category, "aspect": row.aspect, "answer_kind": row.answer_kind,
            "axis_min": axis.get("min"), "axis_max": axis.get("max"), "log_scale": axis.get("scale") == "log",
            "key_points": list(row.key_points or []),
        })
    flags = [Flag(f) for f in (row.difficulty or [])]  # an unknown flag raises: it was validated on entry
    return Sample(
        id=f"qa-{row.id}", benchmark=benchmark, question=row.question, answers=[row.answer], image=image,
        flags=flags, astro=astro,
        source=SourceInfo(url=figure.page_url, caption=figure.caption, paper_id=figure.paper_id,
                          context="\n".join(figure.context or []) or None),
        metadata={"qa_item_id": row.id, "figure_id": figure.id, "figure_sha256": figure.sha256,
                  "origin": row.origin, "style": row.style, "status": row.status, "revision": row.revision,
                  "model": row.model, "prompt_version": row.prompt_version,
                  "created_at": iso_utc(row.created_at)},
    )
