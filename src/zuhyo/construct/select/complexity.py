"""``zuhyo complexity``: the Chart Complexity Vector (CCV) of each figure (DomainCQA §3.1, Appendix A).

The CCV has ten binary attributes (0 simple, 1 complex) defined in DomainCQA Appendix A, Table 3
(:data:`zuhyo.schema.CCV_ATTRIBUTES`, verbatim, and in ``prompts/construct/ccv.txt``); a chart's overall complexity is
"the L1 norm of its CCV, i.e., the sum of the vector's elements" (§4.1, :func:`l1_score`); Table 4 reports, per
attribute, the proportion of simple and complex charts (:func:`table4`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from zuhyo.construct.select.labelling import LabelTask
from zuhyo.construct.workspace.labels import CCV_STAGE, ccv_tuple
from zuhyo.schema import CCV_ATTRIBUTES

#: The reply's schema: the ten attribute names of Table 3, each 0 or 1, nothing else.
CCVReply: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "CCVReply", __config__=ConfigDict(extra="forbid"),
    **{a.name: (Literal[0, 1], ...) for a in CCV_ATTRIBUTES})


def ccv_from_columns(row: dict[str, str]) -> dict[str, int]:
    """The ten attribute columns of a CSV row as ``{name: 0|1}``; ValueError naming the first bad column."""
    out = {}
    for a in CCV_ATTRIBUTES:
        cell = row.get(a.name, "").strip()
        if cell not in ("0", "1"):
            raise ValueError(f"{a.name} must be 0 or 1, got {cell!r}")
        out[a.name] = int(cell)
    return out


CCV_TASK = LabelTask(stage=CCV_STAGE, prompt_name="construct/ccv", reply_model=CCVReply,
                     to_value=lambda reply: {a.name: int(getattr(reply, a.name)) for a in CCV_ATTRIBUTES},
                     columns=tuple(a.name for a in CCV_ATTRIBUTES), from_columns=ccv_from_columns)


def l1_score(ccv: Sequence[int]) -> int:
    """The complexity score of a chart: the L1 norm of its CCV, the number of complex attributes (§4.1)."""
    return sum(ccv)


def table4(ccvs: Iterable[Sequence[int]]) -> list[dict[str, Any]]:
    """Per attribute (Table 3 order): its group, and the proportions of simple and complex charts (Table 4);
    proportions are None when there are no charts."""
    vectors = list(ccvs)
    n = len(vectors)
    rows = []
    for i, a in enumerate(CCV_ATTRIBUTES):
        complex_n = sum(v[i] for v in vectors)
        rows.append({"attribute": a.name, "group": a.group, "complex": complex_n,
                     "simple_share": (n - complex_n) / n if n else None,
                     "complex_share": complex_n / n if n else None})
    return rows


def score_histogram(ccvs: Iterable[Sequence[int]]) -> dict[int, int]:
    """Charts per L1 complexity score 0-10 (DomainCQA Figure 4)."""
    counts = Counter(l1_score(v) for v in ccvs)
    return {k: counts.get(k, 0) for k in range(len(CCV_ATTRIBUTES) + 1)}


def summary(current: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Table 4 and the score histogram of the current CCVs (figure id → stored value)."""
    vectors = [ccv_tuple(v) for v in current.values()]
    return {"charts": len(vectors), "table4": table4(vectors), "scores": score_histogram(vectors)}
