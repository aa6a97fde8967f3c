"""The ``metric:<name>`` judge: any registered metric used as a judge (score → verdict_from_score)."""

from __future__ import annotations

from zuhyo.errors import DataError
from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict, verdict_from_score
from zuhyo.evaluate.metrics import METRICS, MetricFn, ensure_registered
from zuhyo.schema import Sample


def sample_for(item: JudgeInput) -> Sample:
    """The item's sample, or a bare one built from its question and references (CLI pairs have no sample)."""
    if item.sample is not None:
        return item.sample
    return Sample(id="pair", benchmark="pairs", question=item.question, answers=list(item.references))


class MetricJudge:
    """Scores with a pure metric; a metric that does not apply (None) gives an unscored verdict."""

    prompt_version = "metric-2"
    """Bumped when a metric's scoring changes (2: Algorithm 3 steps 5-6 zeros, derivations after the last '=')."""

    def __init__(self, name: str, fn: MetricFn) -> None:
        self.name = name
        self.fn = fn
        self.id = f"metric:{name}"

    async def judge(self, item: JudgeInput) -> Verdict:
        try:
            score = self.fn(sample_for(item), item.response)
        except (DataError, ValueError) as e:
            return Verdict(verdict="unscored", reason=f"{self.name}: {e}", decided_by=self.name)
        if score is None:
            return verdict_from_score(None, self.name, reason=f"{self.name} does not apply to this item")
        verdict = verdict_from_score(score, self.name)
        verdict.metrics[self.name] = score
        return verdict

    async def aclose(self) -> None:
        return None


@JUDGES.register("metric", "a registered metric used as the judge: metric:<metric name> (see `zuhyo list`)")
def _build_metric(rest: str, options: JudgeOptions) -> MetricJudge:
    ensure_registered()
    if not rest:
        raise ValueError(f"judge 'metric' needs a metric name: metric:<name>; known: {', '.join(METRICS.names())}")
    return MetricJudge(rest, METRICS.get(rest))
