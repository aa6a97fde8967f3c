"""The ``cascade:<model spec>`` judge: the rules decide what they can, the LLM judge the rest.

Only items the ``rules`` judge leaves *undecided* reach the LLM, which saves judge calls on the many short
numeric answers of chart QA. ``Verdict.decided_by`` says which of the two decided.
"""

from __future__ import annotations

from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict
from zuhyo.evaluate.judges.llm import LLMJudge, backend_for_judge
from zuhyo.evaluate.judges.rules import RulesJudge


class CascadeJudge:
    """Rules first; the LLM judge for what the rules leave undecided."""

    def __init__(self, llm: LLMJudge, rules: RulesJudge | None = None) -> None:
        self.rules = rules or RulesJudge()
        self.llm = llm
        self.id = f"cascade:{llm.backend.spec}"
        self.prompt_version = f"{self.rules.prompt_version}+{llm.prompt_version}"

    async def judge(self, item: JudgeInput) -> Verdict:
        first = await self.rules.judge(item)
        if first.verdict != "undecided":
            return first
        second = await self.llm.judge(item)
        return second.model_copy(update={"decided_by": "llm",
                                         "reason": f"{second.reason} [rules undecided: {first.reason}]".strip()})

    async def aclose(self) -> None:
        await self.llm.aclose()


@JUDGES.register("cascade", "rules first, the LLM judge only for what rules leave undecided: cascade:<model spec>")
def _build_cascade(rest: str, options: JudgeOptions) -> CascadeJudge:
    return CascadeJudge(LLMJudge(backend_for_judge("cascade", rest, options),
                                 max_tokens=int(options.extra.get("max_tokens", 8192))))
