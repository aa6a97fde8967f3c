"""Per-figure labels of the construction stages (image type, chart complexity vector): record and read them.

Labels are append-only (table ``figure_labels``): every model answer and every person's label is kept with its
source, model and prompt version. A figure's *current* label in a stage is its latest human or imported label,
else its latest model label, so a person's correction always wins and a stage re-run with another model keeps
the earlier answers (issue 11).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.queries import dropped_figure_ids
from zuhyo.construct.workspace.tables import FigureLabelRow
from zuhyo.schema import CCV_ATTRIBUTES

#: Where a label came from.
SOURCES = ("model", "human", "import")
#: Stage names of the labels written by ``zuhyo classify`` and ``zuhyo complexity``.
IMAGE_TYPE_STAGE = "image_type"
CCV_STAGE = "ccv"


def find_label(s: Session, figure_id: int, stage: str, source: str, model: str,
               prompt_version: str = "") -> FigureLabelRow | None:
    """The label with exactly this identity, if recorded."""
    return s.scalar(select(FigureLabelRow).where(
        FigureLabelRow.figure_id == figure_id, FigureLabelRow.stage == stage, FigureLabelRow.source == source,
        FigureLabelRow.model == model, FigureLabelRow.prompt_version == prompt_version))


def record_label(s: Session, figure_id: int, stage: str, value: Any, *, source: str, model: str,
                 prompt_version: str = "", raw: str | None = None, run_id: int | None = None) -> FigureLabelRow | None:
    """Append a label inside the caller's write transaction; None (nothing added) when its identity
    (figure, stage, source, model, prompt version) is already recorded."""
    if source not in SOURCES:
        raise ValueError(f"label source must be one of {', '.join(SOURCES)}, got {source!r}")
    if find_label(s, figure_id, stage, source, model, prompt_version) is not None:
        return None
    row = FigureLabelRow(figure_id=figure_id, stage=stage, value=value, source=source, model=model,
                         prompt_version=prompt_version, raw=raw, run_id=run_id)
    s.add(row)
    s.flush()
    return row


def current_label_rows(s: Session, stage: str, *, kept_only: bool = True) -> dict[int, FigureLabelRow]:
    """The current label row per figure in ``stage``: the latest human/import label, else the latest model one.

    ``kept_only`` leaves out figures whose current filter decision is drop.
    """
    best: dict[int, FigureLabelRow] = {}
    for row in s.scalars(select(FigureLabelRow).where(FigureLabelRow.stage == stage).order_by(FigureLabelRow.id)):
        held = best.get(row.figure_id)
        if held is None or row.source != "model" or held.source == "model":
            best[row.figure_id] = row
    if kept_only:
        for fid in dropped_figure_ids(s):
            best.pop(fid, None)
    return best


def current_labels(ws: Workspace, stage: str, *, kept_only: bool = True) -> dict[int, Any]:
    """``{figure id: current label value}`` in ``stage`` (see :func:`current_label_rows`)."""
    with ws.db.read() as s:
        return {fid: row.value for fid, row in sorted(current_label_rows(s, stage, kept_only=kept_only).items())}


def ccv_tuple(value: dict[str, Any]) -> tuple[int, ...]:
    """A stored CCV (``{attribute name: 0|1}``) as a tuple in :data:`zuhyo.schema.CCV_ATTRIBUTES` order."""
    return tuple(int(value[a.name]) for a in CCV_ATTRIBUTES)


def current_ccvs(ws: Workspace, *, kept_only: bool = True) -> dict[int, tuple[int, ...]]:
    """``{figure id: CCV}`` of the figures with a current CCV label (not dropped ones unless ``kept_only`` is
    False); each CCV is 10 ints 0/1 in the order of DomainCQA Appendix A Table 3 (``CCV_ATTRIBUTES``)."""
    return {fid: ccv_tuple(v) for fid, v in current_labels(ws, CCV_STAGE, kept_only=kept_only).items()}
