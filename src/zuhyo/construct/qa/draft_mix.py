"""The question mix of ``zuhyo draft --mix``: which kinds each chart gets. Pure; no I/O.

- ``every`` (zuhyo's default): every kind for every chart — 9 FQA per sampled chart, 2 AQA per chart abstract.
- ``table1``: DomainCQA's own mix (Table 1, §4.2): 1,509 FQA pairs on 303 charts (Color 211, Style 133, Text 213,
  Layout 45, Point 130, Interval 101, Calculation 84, Inference 290, Summary 302) and 381 AQA pairs on 257 chart
  abstracts (KB-Inference 200, KB-Summary 181), scaled to the charts at hand.

The paper prints the counts, not how it chose which chart gets which question; the allocation here is ours and
reproducible (:func:`plan_mix`): the total is the paper's questions per chart times the charts at hand (rounded),
split over the kinds by largest remainders of the paper's shares; each kind then goes to that many distinct charts,
kinds with the largest count first, each to the charts with the fewest questions so far (ties broken by one seeded
random order of the charts), so no chart gets a kind twice and the charts' loads differ by at most one or two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

#: DomainCQA Table 1: questions per kind (``DraftKind.key_part``), FQA then AQA.
TABLE1_FQA: dict[str, int] = {
    "FQA-Visual:Color": 211, "FQA-Visual:Style": 133, "FQA-Visual:Text": 213, "FQA-Visual:Layout": 45,
    "FQA-Data:Point": 130, "FQA-Data:Interval": 101, "FQA-Data:Calculation": 84,
    "FQA-Inference": 290, "FQA-Summary": 302,
}
TABLE1_AQA: dict[str, int] = {"AQA-KB-Inference": 200, "AQA-KB-Summary": 181}
#: Charts the Table 1 counts were drafted on (DomainCQA §4.1: 303 FQA charts, 257 chart abstracts).
TABLE1_FQA_CHARTS = 303
TABLE1_AQA_CHARTS = 257
MIXES = ("every", "table1")


class MixPlan(BaseModel):
    """The questions planned per kind for a set of charts, and which chart gets which kinds."""

    mix: str
    """``every`` or ``table1``."""
    charts: int
    """Charts the plan covers."""
    counts: dict[str, int]
    """Questions planned per kind (``FQA-Visual:Color`` …)."""
    paper_counts: dict[str, int] = Field(default_factory=dict)
    """The paper's counts the plan scales (Table 1; empty for ``every``)."""
    per_chart: dict[int, list[str]] = Field(default_factory=dict)
    """Kinds per chart id, in the order of ``counts``."""


def scaled_counts(paper: Mapping[str, int], paper_charts: int, charts: int) -> dict[str, int]:
    """The paper's per-kind counts scaled to ``charts``: the total rounded from the paper's questions per chart,
    split by largest remainders of each kind's share (ties: the kind listed first); no kind above ``charts``."""
    total_paper = sum(paper.values())
    total = min(round(total_paper * charts / paper_charts), charts * len(paper))
    exact = {k: v * total / total_paper for k, v in paper.items()}
    out = {k: min(int(np.floor(v)), charts) for k, v in exact.items()}
    order = sorted(paper, key=lambda k: (-(exact[k] - np.floor(exact[k])), list(paper).index(k)))
    rest = total - sum(out.values())
    while rest > 0:
        for k in order:
            if rest and out[k] < charts:
                out[k] += 1
                rest -= 1
    return out


def plan_mix(chart_ids: Sequence[int], kinds: Sequence[str], mix: str, seed: int, *,
             paper: Mapping[str, int] | None = None, paper_charts: int = 0) -> MixPlan:
    """Which of ``kinds`` each chart gets under ``mix`` (see the module docstring); ``paper`` and ``paper_charts``
    are Table 1's counts for those kinds (required for ``table1``). Deterministic for a seed."""
    if mix not in MIXES:
        raise ValueError(f"--mix must be one of {', '.join(MIXES)}, got {mix!r}")
    ids = sorted(chart_ids)
    if mix == "every" or not ids or not kinds:
        return MixPlan(mix=mix, charts=len(ids), counts={k: len(ids) for k in kinds},
                       per_chart={i: list(kinds) for i in ids})
    assert paper is not None and paper_charts > 0
    wanted = {k: paper[k] for k in kinds}
    counts = scaled_counts(wanted, paper_charts, len(ids))
    tiebreak = np.random.default_rng([seed, 3]).permutation(len(ids)).tolist()
    load = [0] * len(ids)
    given: list[set[str]] = [set() for _ in ids]
    for kind in sorted(counts, key=lambda k: (-counts[k], list(counts).index(k))):
        pick = sorted(range(len(ids)), key=lambda j: (load[j], tiebreak[j]))[:counts[kind]]
        for j in pick:
            load[j] += 1
            given[j].add(kind)
    per_chart = {i: [k for k in kinds if k in given[j]] for j, i in enumerate(ids)}
    return MixPlan(mix=mix, charts=len(ids), counts=counts, paper_counts=wanted,
                   per_chart={i: ks for i, ks in per_chart.items() if ks})
