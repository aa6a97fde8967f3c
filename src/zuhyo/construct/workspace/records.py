"""Writing to the workspace: sources, documents, figures, per-item errors and decisions, one item at a time.

Each function works inside the caller's write transaction (:meth:`zuhyo.construct.workspace.db.Database.write`); a stage
opens one short transaction per item, so a crash loses at most the item in hand. Identity is by the tables'
unique constraints, which makes re-running a stage add nothing twice.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.workspace.orm import iso_utc, utcnow
from zuhyo.construct.workspace.tables import DecisionRow, Document, FigureRow, ItemError, Source
from zuhyo.schema import Decision, Figure

#: Values a decision can take today (stages may add their own later, e.g. ``duplicate``).
DECISIONS = ("keep", "drop")

_FIGURE_FIELDS = tuple(f for f in Figure.model_fields if f not in ("id", "document_id"))


def get_or_create_source(s: Session, kind: str, locator: str, title: str | None = None,
                         meta: dict[str, Any] | None = None) -> Source:
    """The source (kind, locator), created when new."""
    row = s.scalar(select(Source).where(Source.kind == kind, Source.locator == locator))
    if row is None:
        row = Source(kind=kind, locator=locator, title=title, meta=meta or {})
        s.add(row)
        s.flush()
    return row


def get_or_create_document(s: Session, source_id: int, locator: str, **fields: Any) -> tuple[Document, bool]:
    """The document (source, locator) and whether it was created now."""
    row = s.scalar(select(Document).where(Document.source_id == source_id, Document.locator == locator))
    if row is not None:
        return row, False
    row = Document(source_id=source_id, locator=locator, meta=fields.pop("meta", {}), **fields)
    s.add(row)
    s.flush()
    return row, True


def find_figure_row(s: Session, document_id: int, locator: str) -> FigureRow | None:
    return s.scalar(select(FigureRow).where(FigureRow.document_id == document_id, FigureRow.locator == locator))


def add_figure(s: Session, document_id: int, figure: Figure, run_id: int | None = None) -> FigureRow:
    """Insert ``figure`` into ``document_id`` (the caller has checked it is not there yet)."""
    row = FigureRow(document_id=document_id, run_id=run_id,
                    **figure.model_dump(include=set(_FIGURE_FIELDS)))
    s.add(row)
    s.flush()
    return row


def update_figure(row: FigureRow, fields: dict[str, Any]) -> bool:
    """Set the given figure fields where they differ; True when anything changed."""
    changed = False
    for key, value in fields.items():
        if key not in _FIGURE_FIELDS or key in ("sha256", "locator"):
            raise ValueError(f"figure field {key!r} cannot be updated")
        if getattr(row, key) != value:
            setattr(row, key, value)
            changed = True
    return changed


def figure_from_row(row: FigureRow) -> Figure:
    """The schema type of a stored figure."""
    data = {f: getattr(row, f) for f in _FIGURE_FIELDS}
    return Figure(id=row.id, document_id=row.document_id, **data)


def record_error(s: Session, stage: str, item_key: str, locator: str, reason: str, *, source_id: int | None = None,
                 figure_id: int | None = None, run_id: int | None = None) -> None:
    """Record (or refresh) why ``item_key`` failed in ``stage``; one row per (stage, item)."""
    row = s.scalar(select(ItemError).where(ItemError.stage == stage, ItemError.item_key == item_key))
    now = utcnow()
    if row is None:
        s.add(ItemError(stage=stage, item_key=item_key, locator=locator, reason=reason, source_id=source_id,
                        figure_id=figure_id, run_id=run_id, attempts=1, first_at=now, last_at=now))
    else:
        row.reason, row.run_id, row.last_at, row.resolved_at = reason, run_id, now, None
        row.attempts += 1
    s.flush()


def resolve_error(s: Session, stage: str, item_key: str) -> None:
    """Mark an earlier error of ``item_key`` in ``stage`` as resolved (the item worked this time)."""
    row = s.scalar(select(ItemError).where(ItemError.stage == stage, ItemError.item_key == item_key,
                                           ItemError.resolved_at.is_(None)))
    if row is not None:
        row.resolved_at = utcnow()


def record_decision(s: Session, decision: Decision, run_id: int | None = None) -> DecisionRow:
    """Append a decision (never updates or deletes one)."""
    if decision.decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, got {decision.decision!r}")
    row = DecisionRow(figure_id=decision.figure_id, stage=decision.stage, decision=decision.decision,
                      reason=decision.reason, decided_by=decision.decided_by, evidence=decision.evidence,
                      run_id=run_id)
    s.add(row)
    s.flush()
    return row


def decision_from_row(row: DecisionRow) -> Decision:
    return Decision(figure_id=row.figure_id, stage=row.stage, decision=row.decision, reason=row.reason,
                    decided_by=row.decided_by, at=iso_utc(row.created_at), evidence=row.evidence or {})


# An arXiv identifier, new style (2101.01234, 2101.01234v2) or old (astro-ph/0601001): its abstract page is its URL.
_ARXIV_ID = re.compile(r"(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?")


def source_title(src: Source, doc: Document) -> str | None:
    """What the card and the statistics name a source by: a white paper's series; else a title given at collection
    (``collect folder --title``); else the document's own title (a paper's ``\\title``, a PDF's or page's title);
    else the source's (a file, folder or paper id)."""
    meta = src.meta or {}
    for value in (meta.get("white_paper"), meta.get("series"), meta.get("title")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    if src.kind != "folder" and doc.title:  # a folder's documents are named after its subfolders: no better
        return doc.title
    return src.title or doc.title


def source_url(src: Source, doc: Document, figure_url: str | None) -> str | None:
    """Where a reader finds the source: the figure's page, else the document's, else a URL given at collection
    (``collect folder --url``), else an arXiv paper's abstract page (from its id)."""
    if figure_url or doc.page_url:
        return figure_url or doc.page_url
    given = (src.meta or {}).get("url")
    if isinstance(given, str) and given.strip():
        return given.strip()
    if src.kind == "latex" and src.title and _ARXIV_ID.fullmatch(src.title):
        return f"https://arxiv.org/abs/{src.title}"
    return None
