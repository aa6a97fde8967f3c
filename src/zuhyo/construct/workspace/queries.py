"""Reading the workspace (status counts, figure listings) and people's decisions (``zuhyo decide``)."""

from __future__ import annotations

import os
import re
import socket
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from zuhyo.construct.workspace import Workspace, current_user
from zuhyo.construct.workspace.db import WorkspaceError
from zuhyo.construct.workspace.orm import iso_utc
from zuhyo.construct.workspace.qa_tables import QAItemRow
from zuhyo.construct.workspace.records import (
    DECISIONS,
    decision_from_row,
    figure_from_row,
    record_decision,
    source_title,
)
from zuhyo.construct.workspace.tables import DecisionRow, Document, FigureRow, ItemError, Source, StageRun
from zuhyo.schema import Decision

#: Stage a person's decision is filed under when the figure has no stage decision to overturn.
REVIEW_STAGE = "review"
_HEX_RE = re.compile(r"^[0-9a-f]{8,64}$")


def _current_decisions() -> Select[DecisionRow]:
    """The latest decision per (figure, stage): decisions are append-only, the newest one counts."""
    latest = (select(func.max(DecisionRow.id).label("id"))
              .group_by(DecisionRow.figure_id, DecisionRow.stage).subquery())
    return select(DecisionRow).join(latest, DecisionRow.id == latest.c.id)


def figure_status(decisions: dict[str, str]) -> str:
    """``dropped`` when any stage's current decision is drop, ``kept`` when some stage kept it, else ``collected``."""
    if any(d == "drop" for d in decisions.values()):
        return "dropped"
    return "kept" if decisions else "collected"


def _decisions_by_figure(s: Session) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for row in s.scalars(_current_decisions()):
        out.setdefault(row.figure_id, {})[row.stage] = row.decision
    return out


def dropped_figure_ids(s: Session) -> set[int]:
    """Figures whose current decision in some stage is drop (a figure never decided on counts as kept)."""
    return {fid for fid, d in _decisions_by_figure(s).items() if figure_status(d) == "dropped"}


def run_status(run: StageRun) -> str:
    """The run's recorded status, except that a ``running`` run whose process (on this host) is gone was killed:
    ``interrupted``."""
    if run.status != "running" or run.host != socket.gethostname():
        return run.status
    try:
        os.kill(run.pid, 0)
    except ProcessLookupError:
        return "interrupted"
    except PermissionError:  # alive, another user's
        pass
    return run.status


#: Model stages whose items are keyed by model (a re-run with another model asks other keys): a later run that
#: finished with no error supersedes their earlier errors (``superseded_errors`` in :func:`status`).
SUPERSEDING_STAGES = ("image_type", "ccv", "abstracts", "draft", "audit")


def _last_clean_runs(runs: list[StageRun]) -> dict[str, int]:
    """Per superseding stage, the id of its latest run that finished ``done`` with no error."""
    return {run.stage: run.id for run in runs if run.stage in SUPERSEDING_STAGES and run.status == "done"
            and not (run.counts or {}).get("errors")}


def status(ws: Workspace) -> dict[str, Any]:
    """Counts per stage and decision, unresolved errors per stage (those of a model stage before a later run that
    had none are ``superseded_errors``), the last run of each stage, and the QA items by status and by origin."""
    with ws.db.read() as s:
        n_sources = s.scalar(select(func.count()).select_from(Source)) or 0
        n_documents = s.scalar(select(func.count()).select_from(Document)) or 0
        n_figures = s.scalar(select(func.count()).select_from(FigureRow)) or 0
        stages: dict[str, dict[str, Any]] = {}
        by_kind = {kind: n for kind, n in s.execute(
            select(Source.kind, func.count(FigureRow.id)).join(Document, Document.source_id == Source.id)
            .join(FigureRow, FigureRow.document_id == Document.id).group_by(Source.kind))}
        stages["collect"] = {"figures": n_figures, "documents": n_documents, "by_kind": by_kind}
        decided = _decisions_by_figure(s)
        for figure_decisions in decided.values():
            for stage, decision in figure_decisions.items():
                counts = stages.setdefault(stage, {})
                counts[decision] = counts.get(decision, 0) + 1
        runs = list(s.scalars(select(StageRun).order_by(StageRun.id)))
        clean = _last_clean_runs(runs)
        unresolved = select(ItemError.stage, ItemError.run_id).where(ItemError.resolved_at.is_(None))
        for stage, run_id in s.execute(unresolved):
            entry = stages.setdefault(stage, {})
            key = "superseded_errors" if run_id is not None and run_id < clean.get(stage, 0) else "errors"
            entry[key] = entry.get(key, 0) + 1
        for run in runs:
            entry = stages.setdefault(run.stage, {})
            entry["runs"] = entry.get("runs", 0) + 1
            entry["last_run"] = {"id": run.id, "status": run_status(run), "started_by": run.started_by,
                                 "started_at": iso_utc(run.started_at), "counts": run.counts}
        status_counts = {"collected": 0, "kept": 0, "dropped": 0}
        for d in decided.values():
            status_counts[figure_status(d)] += 1
        status_counts["collected"] = n_figures - status_counts["kept"] - status_counts["dropped"]
        qa_by_origin: dict[str, dict[str, int]] = {}
        for origin, st, n in s.execute(select(QAItemRow.origin, QAItemRow.status, func.count(QAItemRow.id))
                                       .group_by(QAItemRow.origin, QAItemRow.status)):
            qa_by_origin.setdefault(origin, {})[st] = n
    qa_items: dict[str, int] = {}
    for by_status in qa_by_origin.values():
        for st, n in by_status.items():
            qa_items[st] = qa_items.get(st, 0) + n
    for entry in stages.values():
        entry.setdefault("errors", 0)
    return {"qa_items": dict(sorted(qa_items.items())),
            "qa_items_by_origin": {o: dict(sorted(c.items())) for o, c in sorted(qa_by_origin.items())},
            "workspace": str(ws.root), "database": ws.db.backend, "revision": ws.revision(),
            "sources": n_sources, "documents": n_documents, "figures": n_figures, "status": status_counts,
            "errors": sum(e["errors"] for e in stages.values()), "stages": stages}


def list_figures(ws: Workspace, stage: str | None = None, decision: str | None = None) -> list[dict[str, Any]]:
    """Figures with their status, in id order; ``stage``/``decision`` keep those whose current decision matches.

    Each carries its source (``source_id``, as ``zuhyo export --source-license ID=...`` takes it, and its title)
    and, per stage, its current decision's reason, who made it and the evidence (``decision_details``)."""
    with ws.db.read() as s:
        query = select(FigureRow).order_by(FigureRow.id)
        if stage is not None or decision is not None:
            current = _current_decisions().subquery()
            query = query.join(current, current.c.figure_id == FigureRow.id)
            if stage is not None:
                query = query.where(current.c.stage == stage)
            if decision is not None:
                query = query.where(current.c.decision == decision)
            query = query.distinct()
        rows = list(s.scalars(query))
        why = _decision_details(s)  # the current decisions, read once: the status comes from them too
        decided = {fid: {stage: d["decision"] for stage, d in stages.items()} for fid, stages in why.items()}
        # named as the export's card names them (a series, a given title, the paper's or page's own title)
        sources = {doc.id: (src.id, source_title(src, doc)) for doc, src in s.execute(
            select(Document, Source).join(Source, Source.id == Document.source_id))}
    out: list[dict[str, Any]] = []
    for row in rows:
        fig = figure_from_row(row)
        d = decided.get(row.id, {})
        out.append({"id": fig.id, "sha256": fig.sha256, "caption": fig.caption, "figure_number": fig.figure_number,
                    "page_url": fig.page_url, "paper_id": fig.paper_id, "locator": fig.locator,
                    "document_id": fig.document_id, "width": fig.width, "height": fig.height,
                    "status": figure_status(d), "decisions": d})
        source_id, source_name = sources.get(row.document_id, (None, None))
        out[-1].update(source_id=source_id, source_title=source_name, decision_details=why.get(row.id, {}))
        latest = why.get(row.id, {}).get(stage) if stage is not None else None
        if latest is not None:  # the asked stage's decision; a near duplicate names the figure it duplicates
            out[-1]["decision"] = latest
            evidence = latest["evidence"]
            if "duplicate_of" in evidence:
                out[-1]["duplicate_of"] = {**evidence["duplicate_of"], "score": evidence.get("score"),
                                           "reason": latest["reason"]}
    return out


def _decision_details(s: Session) -> dict[int, dict[str, dict[str, Any]]]:
    """``{figure id: {stage: {decision, reason, decided_by, at, evidence}}}`` of the current decisions."""
    out: dict[int, dict[str, dict[str, Any]]] = {}
    for row in s.scalars(_current_decisions()):
        out.setdefault(row.figure_id, {})[row.stage] = {
            "decision": row.decision, "reason": row.reason, "decided_by": row.decided_by,
            "at": iso_utc(row.created_at), "evidence": row.evidence or {}}
    return out


def resolve_figure(s: Session, ref: str) -> FigureRow:
    """The figure named by ``ref``: its id, or its image's SHA-256 (a prefix of at least 8 hex digits)."""
    if ref.isdigit():
        row = s.get(FigureRow, int(ref))
        if row is None:
            raise WorkspaceError(f"no figure with id {ref}")
        return row
    if not _HEX_RE.match(ref.lower()):
        raise WorkspaceError(f"figure {ref!r}: give a figure id or at least 8 hex digits of its sha256")
    rows = list(s.scalars(select(FigureRow).where(FigureRow.sha256.startswith(ref.lower())).limit(6)))
    if not rows:
        raise WorkspaceError(f"no figure whose sha256 starts with {ref}")
    if len(rows) > 1:
        ids = ", ".join(str(r.id) for r in rows[:5])
        raise WorkspaceError(f"figure {ref!r} is ambiguous (figures {ids}{', ...' if len(rows) > 5 else ''}); "
                             "give the figure id")
    return rows[0]


def decide(ws: Workspace, ref: str, decision: str, reason: str, *, by: str | None = None,
           stage: str | None = None) -> Decision:
    """Record a person's keep/drop decision on a figure, overturning the stage's current one.

    The decision is filed under ``stage``; by default the stage of the figure's latest decision (the one being
    overturned), or ``review`` when no stage has decided yet.
    """
    if decision not in DECISIONS:
        raise WorkspaceError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
    if not reason.strip():
        raise WorkspaceError("a decision needs a reason (--reason)")
    with ws.db.write() as s:
        row = resolve_figure(s, ref)
        if stage is None:
            last = s.scalar(select(DecisionRow).where(DecisionRow.figure_id == row.id)
                            .order_by(DecisionRow.id.desc()).limit(1))
            stage = last.stage if last is not None else REVIEW_STAGE
        new = record_decision(s, Decision(figure_id=row.id, stage=stage, decision=decision, reason=reason.strip(),
                                          decided_by=f"user:{by or current_user()}"))
        return decision_from_row(new)
