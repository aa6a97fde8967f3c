"""The vote of DomainCQA Algorithm 2 (line 12, VoT) and reading its outcomes (``abstract_outcomes``).

:func:`tally` turns each model's choice into an outcome; :func:`record_outcome` appends it when it changed;
:func:`chart_abstracts` is what drafting reads (AQA questions are asked about chart abstracts, DomainCQA §3.2).
The models' choices themselves are made by :mod:`zuhyo.construct.qa.abstracts`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.qa_tables import AbstractOutcome

#: The outcomes of the vote (``abstract_outcomes.outcome``); only ``majority`` names a chart.
OUTCOMES = ("majority", "tie", "no_majority", "no_votes")


def tally(votes: Mapping[str, int | None]) -> tuple[str, int | None]:
    """Algorithm 2 line 12: (outcome, chart) from each model's choice (None: the model gave no valid vote).

    ``majority`` when one chart has more than half of the k votes (k = all models asked, missing votes
    included); ``tie`` when several charts share the top count; ``no_majority`` when one chart leads without
    more than half; ``no_votes`` when no model voted. Only ``majority`` names a chart: nothing is guessed.
    """
    counts = Counter(v for v in votes.values() if v is not None)
    if not counts:
        return "no_votes", None
    top = max(counts.values())
    leaders = [fid for fid, n in counts.items() if n == top]
    if len(leaders) > 1:
        return "tie", None
    if 2 * top > len(votes):
        return "majority", leaders[0]
    return "no_majority", None


def _latest_outcomes(s: Session) -> dict[int, AbstractOutcome]:
    latest = select(func.max(AbstractOutcome.id)).group_by(AbstractOutcome.document_id)
    return {row.document_id: row for row in s.scalars(select(AbstractOutcome).where(AbstractOutcome.id.in_(latest)))}


def abstract_outcomes(ws: Workspace) -> dict[int, dict[str, Any]]:
    """``{document id: {"outcome", "figure_id", "votes", "run_id"}}``: each paper's latest outcome."""
    with ws.db.read() as s:
        return {doc: {"outcome": row.outcome, "figure_id": row.figure_id, "votes": dict(row.votes or {}),
                      "run_id": row.run_id} for doc, row in _latest_outcomes(s).items()}


def chart_abstracts(ws: Workspace) -> dict[int, int]:
    """``{document id: figure id}``: the chart abstract of every paper whose latest outcome is a majority."""
    return {doc: o["figure_id"] for doc, o in abstract_outcomes(ws).items()
            if o["outcome"] == "majority" and o["figure_id"] is not None}


def record_outcome(s: Session, document_id: int, outcome: str, figure_id: int | None, votes: dict[str, int | None],
                   *, charts: dict[str, int], prompt_version: str, run_id: int) -> bool:
    """Append the paper's outcome unless its latest one is the same (outcome, chart and votes); True if added."""
    latest = s.scalar(select(AbstractOutcome).where(AbstractOutcome.document_id == document_id)
                      .order_by(AbstractOutcome.id.desc()).limit(1))
    if latest is not None and (latest.outcome, latest.figure_id, latest.votes) == (outcome, figure_id, votes):
        return False
    counts = Counter(v for v in votes.values() if v is not None)
    s.add(AbstractOutcome(document_id=document_id, outcome=outcome, figure_id=figure_id, votes=votes,
                          meta={"prompt_version": prompt_version, "models": list(votes),
                                "counts": {str(k): n for k, n in counts.items()}, "charts": charts},
                          run_id=run_id))
    return True
