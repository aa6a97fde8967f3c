"""L3Score: first-token yes/no log-probabilities, the reference implementation's rules, the judge round trip."""

from __future__ import annotations

import math

import pytest

from zuhyo.evaluate.judges.base import JudgeInput
from zuhyo.evaluate.judges.l3score import L3ScoreJudge, l3score_from_logprobs
from zuhyo.models.base import ModelReply
from zuhyo.testing.scripted import ScriptedBackend


def LogprobBackend(*tops: list[dict[str, float]] | None) -> ScriptedBackend:  # noqa: N802 - stands for a backend
    """A backend whose replies carry the given per-token top log-probabilities."""
    return ScriptedBackend(*(ModelReply(text="Yes", top_logprobs=t) for t in tops))


def test_softmax_over_yes_and_no() -> None:
    top = {"Yes": math.log(0.6), "No": math.log(0.3), "Maybe": math.log(0.05)}
    assert l3score_from_logprobs(top) == pytest.approx(0.6 / 0.9)


def test_case_insensitive_and_stripped_tokens_and_yeah() -> None:
    assert l3score_from_logprobs({" yes": math.log(0.5), " NO": math.log(0.5)}) == pytest.approx(0.5)
    assert l3score_from_logprobs({"yeah": math.log(0.8), "no": math.log(0.2)}) == pytest.approx(0.8)


def test_neither_token_in_top_k_gives_zero() -> None:
    assert l3score_from_logprobs({"The": -0.1, "It": -2.5}) == 0.0


def test_only_yes_found_uses_min_of_lowest_and_remaining_mass() -> None:
    # top-5 probs 0.5, 0.2, 0.1, 0.05, 0.05 → remaining 0.1, lowest 0.05 → P(no) estimated as 0.05
    top = {"yes": math.log(0.5), "a": math.log(0.2), "b": math.log(0.1), "c": math.log(0.05), "d": math.log(0.05)}
    assert l3score_from_logprobs(top) == pytest.approx(0.5 / (0.5 + 0.05))
    # only "no" found: P(yes) estimated the same way
    top_no = {"no": math.log(0.9), "a": math.log(0.04)}
    assert l3score_from_logprobs(top_no) == pytest.approx(0.04 / (0.04 + 0.9))


def test_only_the_five_most_likely_alternatives_count() -> None:
    top = {"a": -0.5, "b": -1.0, "c": -1.5, "d": -2.0, "e": -2.5, "yes": -3.0}
    assert l3score_from_logprobs(top) == 0.0  # "yes" is sixth


async def test_judge_requests_logprobs_and_records_the_score() -> None:
    backend = LogprobBackend([{"Yes": math.log(0.7), "No": math.log(0.3)}], [{"No": -0.01, "Yes": -5.0}])
    judge = L3ScoreJudge(backend)
    v = await judge.judge(JudgeInput(question="Where is Niagara Falls?", references=("US-Canada border", "Ontario"),
                                     response="between New York and Ontario"))
    assert v.score == pytest.approx(0.7) and v.metrics["l3score"] == pytest.approx(0.7)
    assert v.verdict == "correct" and v.decided_by == "l3score"
    req = backend.requests[0]
    assert req.want_logprobs and req.config.temperature == 0.0
    assert "Question: Where is Niagara Falls? \nGround-truth answer: US-Canada border \n" in req.prompt
    assert req.prompt.endswith("Answer in one word - Yes or No.")


async def test_no_logprobs_is_unscored() -> None:
    v = await L3ScoreJudge(LogprobBackend(None)).judge(JudgeInput(question="q", references=("a",), response="a"))
    assert v.verdict == "unscored" and "log-probabilities" in v.reason
