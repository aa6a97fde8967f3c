"""How many items each construction step had: the "construction steps" table of an exported dataset's card.

Read from the workspace's own records, never estimated: figures and sources (collect), the current decisions per
stage (filter, sample; a person's overruling counts as the stage's current decision), the current labels (image
type, CCV), the chart-abstract outcomes (DomainCQA Algorithm 2), the QA items by origin and status, the audit's
flags and the annotation workflow's verifications and reviews, and the stage runs (how often, with which models).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.labels import CCV_STAGE, IMAGE_TYPE_STAGE, current_label_rows
from zuhyo.construct.workspace.qa_tables import (
    AbstractOutcome,
    QAFlag,
    QAItemRow,
    QAModelAnswer,
    ReviewRow,
    VerificationRow,
)
from zuhyo.construct.workspace.queries import status
from zuhyo.construct.workspace.tables import StageRun


@dataclass
class StepCount:
    """One construction step: what it is, the command that does it, and its counts."""

    step: str
    command: str
    count: int
    """The step's headline number (figures collected, kept, labelled, chosen; QA items drafted, accepted ...)."""
    detail: dict[str, Any] = field(default_factory=dict)
    runs: int = 0
    """Stage runs recorded for the step."""
    models: list[str] = field(default_factory=list)
    """Models named in the step's runs' parameters."""
    stages: list[str] = field(default_factory=list)
    """The stage names its runs and errors are recorded under (``zuhyo status``'s stages)."""

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "command": self.command, "count": self.count, "detail": self.detail,
                "runs": self.runs, "models": self.models, "stages": self.stages}


def _runs(ws: Workspace) -> dict[str, tuple[int, list[str]]]:
    out: dict[str, tuple[int, list[str]]] = {}
    with ws.db.read() as s:
        for stage, params in s.execute(select(StageRun.stage, StageRun.params).order_by(StageRun.id)):
            n, models = out.get(stage, (0, []))
            found = (params or {}).get("model") or (params or {}).get("models") or []
            for m in [found] if isinstance(found, str) else list(found):
                if isinstance(m, str) and m not in models:
                    models.append(m)
            out[stage] = (n + 1, models)
    return out


def stage_counts(ws: Workspace, current: dict[str, Any] | None = None) -> list[StepCount]:
    """The construction steps in pipeline order, each with its counts (steps nobody ran show 0); ``current``: the
    workspace's :func:`~zuhyo.construct.workspace.queries.status`, when the caller has it already."""
    st = current if current is not None else status(ws)
    stages = st["stages"]
    runs = _runs(ws)

    def step(name: str, command: str, count: int, detail: dict[str, Any], *run_stages: str) -> StepCount:
        n = sum(runs.get(r, (0, []))[0] for r in run_stages)
        models = [m for r in run_stages for m in runs.get(r, (0, []))[1]]
        return StepCount(name, command, count, detail, n, models, list(run_stages))

    filt = {k: v for k, v in stages.get("filter", {}).items() if k in ("keep", "drop")}
    sample = {k: v for k, v in stages.get("sample", {}).items() if k in ("keep", "drop")}
    last_sample = (stages.get("sample", {}).get("last_run") or {}).get("counts") or {}
    with ws.db.read() as s:
        types = Counter(str(r.value) for r in current_label_rows(s, IMAGE_TYPE_STAGE, kept_only=False).values())
        n_ccv = len(current_label_rows(s, CCV_STAGE, kept_only=False))
        latest = select(func.max(AbstractOutcome.id)).group_by(AbstractOutcome.document_id)
        outcomes = Counter(s.scalars(select(AbstractOutcome.outcome).where(AbstractOutcome.id.in_(latest))))
        origins = Counter(s.scalars(select(QAItemRow.origin)))
        statuses = Counter(s.scalars(select(QAItemRow.status)))
        drafted = Counter(s.scalars(select(QAItemRow.status).where(QAItemRow.origin == "draft")))
        audited = s.scalar(select(func.count(func.distinct(QAModelAnswer.qa_item_id)))) or 0
        flags = Counter(s.scalars(select(QAFlag.kind)))
        open_flags = s.scalar(select(func.count()).select_from(QAFlag).where(QAFlag.status == "open")) or 0
        verified = s.scalar(select(func.count()).select_from(VerificationRow)) or 0
        reviews = s.scalar(select(func.count()).select_from(ReviewRow)) or 0
    collect = stages.get("collect", {})
    return [
        step("collected", "zuhyo collect", st["figures"], {"documents": st["documents"], "sources": st["sources"],
                                                          "by_kind": collect.get("by_kind", {})}, "collect"),
        step("filtered (kept)", "zuhyo filter", filt.get("keep", 0), filt, "filter"),
        step("classified (image type)", "zuhyo classify", sum(types.values()), dict(sorted(types.items())),
             IMAGE_TYPE_STAGE),
        step("complexity (CCV)", "zuhyo complexity", n_ccv, {}, CCV_STAGE),
        step("sampled", "zuhyo sample", sample.get("keep", 0),
             {k: last_sample[k] for k in ("pool", "tvd_joint") if k in last_sample}, "sample"),
        step("chart abstracts", "zuhyo abstracts", outcomes.get("majority", 0), dict(sorted(outcomes.items())),
             "abstracts"),
        step("drafted QA", "zuhyo draft", sum(drafted.values()), dict(sorted(drafted.items())), "draft"),
        step("audited QA", "zuhyo audit", audited, {"flags": dict(sorted(flags.items())), "open flags": open_flags},
             "audit"),
        step("annotated (verifications, reviews)", "zuhyo serve", verified + reviews,
             {"verifications": verified, "reviews": reviews, "QA by origin": dict(sorted(origins.items()))}),
        step("accepted QA", "zuhyo serve", statuses.get("accepted", 0), dict(sorted(statuses.items()))),
    ]
