"""The ``sample`` stage on a workspace: choose ``n`` figures by DomainCQA Algorithm 1
(:mod:`zuhyo.construct.select.sampling`) from the figures with a current CCV label, and record the choice as decisions.

- The pool is :func:`zuhyo.construct.workspace.labels.current_ccvs` (figures with a CCV, none dropped by any
  stage), in figure id order, so a seed and a pool fix the sample.
- Each chosen figure gets one ``keep`` decision in stage ``sample`` by ``stage:sample``, evidence
  ``{seed, n, rank, pool, quota_by, quotas}`` (``rank``: 1…n in figure id order; ``pool``: a hash of the pool's
  ids, CCVs and quota groups), all in one transaction, tagged with the stage run. Figures not chosen get no
  decision: a ``drop`` would mark them dropped for every later stage and shrink the pool of the next sample run.
- The **current sample** is the keep decisions of the latest sample run (the run of the newest ``stage:sample``
  decision): :func:`current_sample`. A re-run whose seed, n, quotas and pool equal the current sample's records
  nothing; any other seed, n, quota or a changed pool is a new sample run, which becomes the current one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy import func, select

from zuhyo.construct.select.sampling import gibbs_sample, sample_stats
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.labels import IMAGE_TYPE_STAGE, current_ccvs, current_labels
from zuhyo.construct.workspace.records import record_decision
from zuhyo.construct.workspace.tables import DecisionRow, Document, FigureRow
from zuhyo.errors import DataError
from zuhyo.schema import Decision

SAMPLE_STAGE = "sample"
DECIDED_BY = "stage:sample"
#: What ``--quota-by`` can group figures by: the source id, the current image type label, the document id.
QUOTA_BY = ("source", "image_type", "document")
#: Group of a figure without an image type label under ``quota_by="image_type"``.
UNLABELLED = "(unlabelled)"


class SampleReport(BaseModel):
    """What a sample run chose (the statistics of :func:`zuhyo.construct.select.sampling.sample_stats`) and recorded."""

    n: int
    pool: int
    tvd_joint: float
    tvd_score: float
    max_attr_diff: float
    random_tvd_joint: float
    seed: int
    quota_by: str | None = None
    groups: dict[str, int] = Field(default_factory=dict)
    """Figures chosen per quota group."""
    sweeps: int
    stabilized: bool
    skipped: int = 0
    """Steps of the chain that found no chart to swap in (Algorithm 1 line 8)."""
    refine_swaps: int | None = None
    """Swaps made by zuhyo's refinement pass after the chain; None when it was off (``--no-refine``)."""
    recorded: int
    """Decisions added (0 when the current sample already is this one)."""
    run_id: int | None
    """The stage run holding the sample's decisions."""
    figure_ids: list[int]


def current_sample(ws: Workspace) -> list[int]:
    """Figure ids of the current sample: the keep decisions of the latest sample run, ascending."""
    with ws.db.read() as s:
        latest = s.scalar(select(func.max(DecisionRow.id)).where(DecisionRow.stage == SAMPLE_STAGE,
                                                                  DecisionRow.decided_by == DECIDED_BY))
        if latest is None:
            return []
        row = s.get(DecisionRow, latest)
        assert row is not None
        return sorted(s.scalars(select(DecisionRow.figure_id).where(
            DecisionRow.stage == SAMPLE_STAGE, DecisionRow.decided_by == DECIDED_BY,
            DecisionRow.run_id == row.run_id, DecisionRow.decision == "keep")))


def _groups(ws: Workspace, ids: list[int], quota_by: str) -> list[str]:
    if quota_by not in QUOTA_BY:
        raise DataError(f"--quota-by must be one of {', '.join(QUOTA_BY)}, got {quota_by!r}")
    if quota_by == "image_type":
        types = current_labels(ws, IMAGE_TYPE_STAGE, kept_only=False)
        return [str(types.get(i, UNLABELLED)) for i in ids]
    with ws.db.read() as s:
        group_col = FigureRow.document_id if quota_by == "document" else Document.source_id
        rows = {fid: g for fid, g in s.execute(select(FigureRow.id, group_col)
                                               .join(Document, Document.id == FigureRow.document_id))}
    return [str(rows[i]) for i in ids]


def _latest_evidence(ws: Workspace) -> tuple[dict[str, object], list[int]] | None:
    with ws.db.read() as s:
        latest = s.scalar(select(func.max(DecisionRow.id)).where(DecisionRow.stage == SAMPLE_STAGE,
                                                                  DecisionRow.decided_by == DECIDED_BY))
        row = s.get(DecisionRow, latest) if latest is not None else None
        evidence = dict(row.evidence or {}) if row is not None else None
    if evidence is None:
        return None
    evidence.pop("rank", None)
    return evidence, current_sample(ws)


def sample_workspace(ws: Workspace, n: int, seed: int, *, quota_by: str | None = None,
                     quotas: Mapping[str, int] | None = None, refine: bool = True) -> SampleReport:
    """Run the sample stage (see the module docstring); ``quotas`` (group → count) needs ``quota_by``, without
    it the groups get proportional shares. ``refine``: zuhyo's refinement pass after Algorithm 1
    (:mod:`zuhyo.construct.select.sample_refine`); False is Algorithm 1 alone."""
    if quotas and not quota_by:
        raise DataError("explicit quotas need --quota-by")
    ccvs = current_ccvs(ws)
    ids = list(ccvs)
    if not ids:
        raise DataError("no figure has a CCV label: run `zuhyo complexity` (or import CCVs) first")
    pool = np.asarray([ccvs[i] for i in ids], dtype=np.uint8)
    groups = _groups(ws, ids, quota_by) if quota_by else None
    result = gibbs_sample(pool, n, seed, groups=groups, quotas=quotas, refine=refine)
    stats = sample_stats(pool, result.indices, seed)
    chosen = [ids[i] for i in result.indices.tolist()]
    fingerprint = hashlib.sha256(json.dumps([ids, pool.tolist(), groups]).encode()).hexdigest()[:16]
    evidence = {"seed": seed, "n": n, "pool": fingerprint, "quota_by": quota_by,
                "quotas": dict(sorted(quotas.items())) if quotas else None, "refine": refine}
    common: dict[str, Any] = dict(stats, seed=seed, quota_by=quota_by, groups=result.group_counts, sweeps=result.sweeps,
                  stabilized=result.stabilized, skipped=result.skipped, refine_swaps=result.refine_swaps,
                  figure_ids=chosen)
    latest = _latest_evidence(ws)
    if latest is not None and latest[0] == evidence and latest[1] == chosen:
        with ws.db.read() as s:
            run_id = s.scalar(select(DecisionRow.run_id).where(DecisionRow.stage == SAMPLE_STAGE,
                                                               DecisionRow.figure_id == chosen[0])
                              .order_by(DecisionRow.id.desc()).limit(1))
        return SampleReport(**common, recorded=0, run_id=run_id)
    with ws.run(SAMPLE_STAGE, dict(evidence)) as run:
        with ws.db.write() as s:
            for rank, fid in enumerate(chosen, 1):
                record_decision(s, Decision(
                    figure_id=fid, stage=SAMPLE_STAGE, decision="keep", decided_by=DECIDED_BY,
                    reason=f"chosen by Gibbs sampling (DomainCQA Algorithm 1"
                    f"{', then zuhyo refinement' if refine else ''}), seed {seed}: {rank} of {n}",
                    evidence={**evidence, "rank": rank}), run_id=run.id)
        run.counts = {"chosen": n, "pool": len(ids), "tvd_joint": stats["tvd_joint"]}
    return SampleReport(**common, recorded=n, run_id=run.id)
