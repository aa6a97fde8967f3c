"""Judge protocol and registry.

A judge decides whether a model's response answers a question correctly. Judge specs:

- ``rules`` — deterministic, Japanese-aware matching (correct / incorrect / undecided);
- ``llm:<model spec>`` — HakushoBench-style binary LLM judge; an unparseable reply is *unscored*;
- ``cascade:<model spec>`` — rules first, the LLM only for what rules leave undecided;
- ``metric:<metric name>`` — a registered pure metric used as the scorer (e.g. ``metric:chartqa_relaxed``);
- benchmark-specific scorers (``astrochart[:<model spec>]``, ``charxiv:<model spec>``, ``l3score:<model spec>``).

A verdict of ``undecided`` or ``unscored`` never counts as wrong: such items are excluded from means and counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from zuhyo.registry import Registry
from zuhyo.schema import Sample

VerdictLabel = Literal["correct", "incorrect", "undecided", "unscored"]


@dataclass(frozen=True)
class JudgeInput:
    """What a judge sees for one prediction."""

    question: str
    references: tuple[str, ...]
    response: str
    """The model's answer text (for CoT: the text after the last ``Answer:`` when present, else the whole reply)."""
    raw_response: str | None = None
    """The full reply, for judges that extract the answer themselves."""
    sample: Sample | None = None
    """The sample, for judges/metrics that need metadata (axis range, question type, key points)."""


class Verdict(BaseModel):
    """A judge's decision on one prediction."""

    verdict: VerdictLabel
    """correct / incorrect; undecided (rules could not tell) or unscored (judge failed): excluded from means."""
    score: float | None = None
    """Score in [0, 1]: 1/0 for binary judges, graded for metrics (Algorithm 3, key-point score); None if excluded."""
    reason: str = ""
    """Why (rule that fired, the LLM judge's reasoning, or the parse failure)."""
    extracted_answer: str | None = None
    """The final answer the judge extracted from the response, when it extracts one."""
    decided_by: str = ""
    """Which judge decided: 'rules', 'llm', a metric name."""
    metrics: dict[str, float] = Field(default_factory=dict)
    """Extra per-item metrics (rougeL, bleu4, l3score, ...)."""


@runtime_checkable
class Judge(Protocol):
    """Async judge. ``id`` and ``prompt_version`` key the judgment cache."""

    id: str
    prompt_version: str

    async def judge(self, item: JudgeInput) -> Verdict: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class JudgeOptions:
    """Options for judges that call a model (passed to the model backend)."""

    api_key: str | None = None
    timeout_s: float = 300.0
    extra: dict[str, Any] = field(default_factory=dict)


JudgeFactory = Callable[[str, JudgeOptions], Judge]
"""Builds a judge from the part of the spec after ``<kind>:`` (may be empty) and options."""

JUDGES: Registry[JudgeFactory] = Registry("judge")


def build_judge(spec: str, options: JudgeOptions | None = None) -> Judge:
    from zuhyo.evaluate.judges import ensure_registered

    ensure_registered()
    kind, _, rest = spec.partition(":")
    return JUDGES.get(kind)(rest, options or JudgeOptions())


def verdict_from_score(score: float | None, decided_by: str, reason: str = "", **metrics: float) -> Verdict:
    """A Verdict for a graded metric: score ≥ 0.5 is 'correct' for accuracy tables; None → unscored."""
    if score is None:
        return Verdict(verdict="unscored", score=None, reason=reason or "metric not applicable",
                       decided_by=decided_by, metrics=metrics)
    return Verdict(verdict="correct" if score >= 0.5 else "incorrect", score=float(score), reason=reason,
                   decided_by=decided_by, metrics=metrics)
