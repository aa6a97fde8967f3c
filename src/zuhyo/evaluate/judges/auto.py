"""``auto[:<model spec>]``: each item judged the way its benchmark is scored in its own paper or official code.

| benchmark family | without a model spec | with ``auto:<spec>`` |
|---|---|---|
| HakushoBench, JGraphQA, sample-ja, other Japanese | ``rules`` | ``cascade:<spec>`` (rules, then the LLM judge) |
| ChartQA | ``metric:chartqa_relaxed`` | same (the official metric needs no LLM) |
| ChartQAPro | ``metric:chartqapro`` | same |
| AstroChart, sample-astro | ``astrochart`` (open items unscored) | ``astrochart:<spec>`` (key points, open items) |
| CharXiv | ``rules`` | ``charxiv:<spec>`` (CharXiv's GPT grading prompts) |
| anything else | ``rules`` | ``cascade:<spec>`` |

Each verdict's ``decided_by`` names the judge that decided, so summaries show the mix. What each judge is given
is chosen by the scoring stage's answer cleaning (``faithful`` by default: what the benchmark's official pipeline
passes, e.g. the raw prediction for ChartQA/ChartQAPro; see :func:`~zuhyo.evaluate.judges.answer_extraction.
scored_answer`); docs/judges.md has the full table of how each benchmark is scored.
"""

from __future__ import annotations

from zuhyo.evaluate.judges.base import JUDGES, Judge, JudgeInput, JudgeOptions, Verdict, build_judge
from zuhyo.evaluate.prompting import prompt_family

_WITHOUT_LLM = {"hakusho": "rules", "chartqa": "metric:chartqa_relaxed", "chartqapro": "metric:chartqapro",
                "astro": "astrochart", "charxiv": "rules", "generic": "rules"}
_WITH_LLM = {"hakusho": "cascade:{s}", "chartqa": "metric:chartqa_relaxed", "chartqapro": "metric:chartqapro",
             "astro": "astrochart:{s}", "charxiv": "charxiv:{s}", "generic": "cascade:{s}"}


def judge_spec_for(family: str, model_spec: str | None) -> str:
    """The judge spec ``auto`` uses for a benchmark family."""
    if model_spec:
        return _WITH_LLM.get(family, "cascade:{s}").format(s=model_spec)
    return _WITHOUT_LLM.get(family, "rules")


class AutoJudge:
    """Dispatches each item to its benchmark's judge (built once per family, on first use)."""

    prompt_version = "1"

    def __init__(self, model_spec: str | None, options: JudgeOptions) -> None:
        self.model_spec = model_spec or None
        self.id = f"auto:{model_spec}" if model_spec else "auto"
        self._options = options
        self._judges: dict[str, Judge] = {}

    def _judge_for(self, item: JudgeInput) -> Judge:
        family = prompt_family(item.sample) if item.sample is not None else "generic"
        spec = judge_spec_for(family, self.model_spec)
        if spec not in self._judges:
            self._judges[spec] = build_judge(spec, self._options)
        return self._judges[spec]

    async def judge(self, item: JudgeInput) -> Verdict:
        return await self._judge_for(item).judge(item)

    async def aclose(self) -> None:
        for j in self._judges.values():
            await j.aclose()


@JUDGES.register("auto", "each benchmark's own scoring: rules / ChartQA relaxed / ChartQAPro / AstroChart suite; "
                 "auto:<model spec> adds the LLM judges (cascade, key points, CharXiv grading)")
def _build_auto(rest: str, options: JudgeOptions) -> AutoJudge:
    return AutoJudge(rest, options)
