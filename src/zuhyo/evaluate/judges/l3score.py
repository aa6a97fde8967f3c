"""The ``l3score:<model spec>`` judge: L3Score, the LLM log-likelihood score.

L3Score (Pramanick et al., "SPIQA: A Dataset for Multimodal Question Answering on Scientific Papers", NeurIPS
2024 D&B, the L3Score metric; used by DomainCQA for open answers) asks a judge model whether a candidate answer
means the same as the ground truth, reads the top-5 log-probabilities of the first generated token, and returns
the probability of "yes" renormalised against "no": ``exp(l_yes) / (exp(l_yes) + exp(l_no))``. As in the
reference implementation (google/spiqa ``metrics/llmlogscore/llmlogscore.py``, Apache-2.0):

- tokens are compared stripped and lower-cased; "yes"/"yeah" count as yes, "no" as no;
- neither found among the top 5 → score 0;
- only one found → the missing one gets the smaller of the lowest top-5 probability and the probability mass
  left outside the top 5 (at least 1e-8).

The prompt (``prompts/judges/l3score.txt``) is SPIQA's. Backends may return more than 5 alternatives; the 5 most
likely are used so scores match the reference setting. Several references: the best score.
"""

from __future__ import annotations

import math

from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict, verdict_from_score
from zuhyo.evaluate.judges.llm import backend_for_judge
from zuhyo.models.base import ChatRequest, GenerationConfig, ModelBackend
from zuhyo.prompts import load_prompt

TOP_K = 5
YES_TOKENS = frozenset({"yes", "yeah"})
NO_TOKENS = frozenset({"no"})
MIN_PROB = 1e-8


def _renormalize(yes_logprob: float, no_logprob: float) -> float:
    top = max(yes_logprob, no_logprob)
    return math.exp(yes_logprob - (top + math.log(math.exp(yes_logprob - top) + math.exp(no_logprob - top))))


def l3score_from_logprobs(first_token: dict[str, float], top_k: int = TOP_K) -> float:
    """L3Score from the first generated token's alternatives ``{token: logprob}``."""
    alts = sorted(first_token.items(), key=lambda kv: kv[1], reverse=True)[:top_k]
    yes = next((lp for tok, lp in alts if tok.strip().lower() in YES_TOKENS), None)
    no = next((lp for tok, lp in alts if tok.strip().lower() in NO_TOKENS), None)
    if yes is None and no is None:
        return 0.0
    if yes is not None and no is not None:
        return _renormalize(yes, no)
    remaining = 1.0 - sum(math.exp(lp) for _, lp in alts)
    missing = math.log(max(min(math.exp(alts[-1][1]), remaining), MIN_PROB))
    return _renormalize(yes, missing) if yes is not None else _renormalize(missing, no)  # type: ignore[arg-type]


class L3ScoreJudge:
    """L3Score over an injected backend that returns log-probabilities."""

    def __init__(self, backend: ModelBackend) -> None:
        self.backend = backend
        self.prompt = load_prompt("judges/l3score")
        self.id = f"l3score:{backend.spec}"
        self.prompt_version = f"{self.prompt.name}-{self.prompt.version}"

    def render(self, question: str, reference: str, candidate: str) -> str:
        return self.prompt.text.replace("<question>", question).replace("<GT>", reference).replace(
            "<answer>", candidate)

    async def judge(self, item: JudgeInput) -> Verdict:
        best: float | None = None
        for ref in item.references:
            request = ChatRequest(prompt=self.render(item.question, ref, item.response), image=None,
                                  config=GenerationConfig(temperature=0.0, max_tokens=16), want_logprobs=True)
            reply = await self.backend.generate(request)
            if not reply.top_logprobs:
                return Verdict(verdict="unscored", reason="the judge model returned no log-probabilities "
                               f"(L3Score needs them); reply: {reply.text[:200]}", decided_by="l3score")
            score = l3score_from_logprobs(reply.top_logprobs[0])
            best = score if best is None else max(best, score)
        assert best is not None
        return verdict_from_score(best, "l3score", reason=f"P(yes) = {best:.4f}", l3score=best)

    async def aclose(self) -> None:
        await self.backend.aclose()


@JUDGES.register("l3score", "L3Score (SPIQA): judge-model P(yes) from first-token top-5 logprobs: "
                            "l3score:<model spec>")
def _build_l3score(rest: str, options: JudgeOptions) -> L3ScoreJudge:
    return L3ScoreJudge(backend_for_judge("l3score", rest, options))
