"""Matchers for blind verification: the existing judges compare the verifier's answer with the reference
(HakushoBench §3.3: the item is accepted when "the two answers match up to minor surface variations").

A judge's ``correct`` is a match, ``incorrect`` a mismatch; ``undecided`` (the rules cannot tell, e.g. two
different phrasings) and ``unscored`` (a model judge failed) are kept as ``undecided``, which the workflow sends
back to the author like a mismatch: nothing is accepted without a decided match.
"""

from __future__ import annotations

from zuhyo.annotate.workflow import Matcher, MatchOutcome, MatchVerdict, WorkflowError

_VERDICTS: dict[str, MatchVerdict] = {"correct": "match", "incorrect": "mismatch"}


def rules_matcher(question: str, reference: str, answer: str) -> MatchOutcome:
    """The ``rules`` judge (numbers, 万/億, %, units, yes/no, lists): correct → match, incorrect → mismatch,
    undecided → undecided."""
    from zuhyo.evaluate.judges.rules import judge_rules

    verdict = judge_rules(question, [reference], answer)
    return MatchOutcome(verdict=_VERDICTS.get(verdict.verdict, "undecided"), judge="rules", reason=verdict.reason)


def judge_matcher(spec: str) -> Matcher:
    """A matcher from a judge spec: ``rules``, or ``cascade:<model spec>`` (rules first, a model for what they
    leave undecided), ``llm:<model spec>``. The judge is built per call (a synchronous call from a worker thread;
    never from inside a running event loop)."""
    if spec == "rules":
        return rules_matcher
    kind = spec.partition(":")[0]
    if kind not in ("cascade", "llm"):
        raise WorkflowError(f"verification judge {spec!r}: use rules, cascade:<model spec> or llm:<model spec>")

    def match(question: str, reference: str, answer: str) -> MatchOutcome:
        import asyncio

        from zuhyo.evaluate.judges.base import JudgeInput, build_judge

        async def once() -> MatchOutcome:
            judge = build_judge(spec)
            try:
                verdict = await judge.judge(JudgeInput(question=question, references=(reference,), response=answer))
            finally:
                await judge.aclose()
            return MatchOutcome(verdict=_VERDICTS.get(verdict.verdict, "undecided"),
                                judge=f"{judge.id} ({verdict.decided_by or kind})", reason=verdict.reason)

        return asyncio.run(once())

    return match
