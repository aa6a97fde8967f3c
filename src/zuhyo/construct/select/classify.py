"""``zuhyo classify``: the image type of each figure, one of the 11 HakushoBench classes.

HakushoBench §4 ("Visual diversity") classifies images into 11 visual-format categories (Bar, Line, Pie, Area,
Scatter, Bubble, Map, Table, Infographic, Dashboard, Other: ChartQAPro's taxonomy plus Map and Table;
:class:`zuhyo.schema.ImageType`) by giving a model each image with a classification prompt, and checks the result by
manual verification of 100 random examples. Here the model's answer is constrained to those 11 names (JSON schema),
people's labels come in with ``--import``, and the check against a labelled sample is :func:`gold_agreement`
(accuracy and Cohen's kappa). The paper says its classification prompt is in its Appendix D, but the prompt text
is not in the version we read, so ours is zuhyo's own: ``prompts/construct/image_type.txt``.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from zuhyo.construct.select.labelling import LabelTask
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.labels import IMAGE_TYPE_STAGE
from zuhyo.errors import DataError
from zuhyo.schema import ImageType


class ImageTypeReply(BaseModel):
    """The model's reply: one of the 11 classes."""

    model_config = ConfigDict(extra="forbid")
    image_type: ImageType


_BY_LOWER = {t.value.lower(): t.value for t in ImageType}


def image_type_from_columns(row: dict[str, str]) -> str:
    """The ``image_type`` cell of a CSV row as the class name (case-insensitive); ValueError when not a class."""
    cell = row.get("image_type", "").strip()
    if cell.lower() not in _BY_LOWER:
        raise ValueError(f"image_type {cell!r} is not one of {', '.join(t.value for t in ImageType)}")
    return _BY_LOWER[cell.lower()]


IMAGE_TYPE_TASK = LabelTask(stage=IMAGE_TYPE_STAGE, prompt_name="construct/image_type", reply_model=ImageTypeReply,
                            to_value=lambda reply: str(reply.image_type.value),  # type: ignore[attr-defined]
                            columns=("image_type",), from_columns=image_type_from_columns)


def type_counts(labels: dict[int, Any]) -> dict[str, int]:
    """Figures per image type, in the order of :class:`ImageType` (every class listed, 0 when absent)."""
    counts = Counter(labels.values())
    return {t.value: counts.get(t.value, 0) for t in ImageType}


def gold_agreement(ws: Workspace, gold_csv: Path | str, labels: dict[int, Any]) -> dict[str, Any]:
    """Agreement of ``labels`` (figure id → image type) with a labelled sample (CSV: figure id or sha256, then
    ``image_type``): ``{"n", "accuracy", "kappa", "missing", "errors"}``; ``missing`` counts gold figures without
    a label, ``errors`` lists bad gold rows (``line N: reason``)."""
    from zuhyo.agreement import agreement
    from zuhyo.construct.workspace.db import WorkspaceError
    from zuhyo.construct.workspace.queries import resolve_figure

    path = Path(gold_csv)
    try:
        rows = list(csv.reader(path.read_text(encoding="utf-8-sig").splitlines()))
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read gold CSV {path}: {e}") from None
    header = [h.strip() for h in rows[0]] if rows else []
    if "image_type" not in header[1:]:
        raise DataError(f"gold CSV {path}: the first column must be the figure id or sha256, then image_type")
    pairs: list[tuple[str, str]] = []
    errors: list[str] = []
    missing = 0
    with ws.db.read() as s:
        for line, cells in enumerate(rows[1:], start=2):
            if not any(c.strip() for c in cells):
                continue
            row = dict(zip(header, (c.strip() for c in cells), strict=False))
            try:
                gold = image_type_from_columns(row)
                fid = resolve_figure(s, cells[0].strip()).id
            except (ValueError, WorkspaceError) as e:
                errors.append(f"line {line}: {e}")
                continue
            if fid in labels:
                pairs.append((gold, labels[fid]))
            else:
                missing += 1
    return {**agreement(pairs), "missing": missing, "errors": errors}
