"""The astrochart judge dispatches per answer kind; open answers get key points, ROUGE-L and BLEU-4."""

from __future__ import annotations

import pytest

from zuhyo.evaluate.judges import build_judge
from zuhyo.evaluate.judges.astrochart import AstroChartJudge, parse_keypoint_reply
from zuhyo.evaluate.judges.base import JudgeInput
from zuhyo.schema import AstroMeta, Sample
from zuhyo.testing.scripted import ScriptedBackend


def _sample(answer: str, **astro: object) -> Sample:
    meta = {"qa_type": "FQA", "category": "Data", **astro}
    return Sample(id="a1", benchmark="astrochart", question="q?", answers=[answer], astro=AstroMeta(**meta))


def _item(sample: Sample, response: str) -> JudgeInput:
    return JudgeInput(question=sample.question, references=tuple(sample.answers), response=response, sample=sample)


async def test_numeric_retrieval_uses_algorithm_3() -> None:
    s = _sample("50", answer_kind="numeric_retrieval", axis_min=0, axis_max=100, aspect="Point")
    v = await build_judge("astrochart").judge(_item(s, "about 53"))
    assert v.decided_by == "astro_numeric" and v.score == pytest.approx(0.97)
    far = await build_judge("astrochart").judge(_item(s, "65"))
    assert far.score == 0.0 and far.verdict == "incorrect"


async def test_numeric_exact_and_choice() -> None:
    s = _sample("1.2e3", answer_kind="numeric_exact", aspect="Calculation")
    judge = build_judge("astrochart")
    assert (await judge.judge(_item(s, "1,200"))).score == 1.0
    assert (await judge.judge(_item(s, "1201"))).score == 0.0
    c = Sample(id="c", benchmark="astrochart", question="Which color?", answers=["(B) red"],
               astro=AstroMeta(qa_type="FQA", category="Visual", aspect="Color", answer_kind="choice"))
    assert (await judge.judge(_item(c, "B"))).verdict == "correct"
    assert (await judge.judge(_item(c, "(c)"))).verdict == "incorrect"


async def test_bad_axis_metadata_is_unscored_with_the_item_named() -> None:
    s = _sample("5", answer_kind="numeric_retrieval", axis_min=0, axis_max=100, log_scale=True)
    v = await build_judge("astrochart").judge(_item(s, "5"))
    assert v.verdict == "unscored" and "astrochart/a1" in v.reason


async def test_open_answer_without_model_is_unscored_but_has_overlap_metrics() -> None:
    s = Sample(id="o", benchmark="astrochart", question="What does the figure show?",
               answers=["銀河の回転速度は半径とともにほぼ一定である"],
               astro=AstroMeta(qa_type="FQA", category="Summary", answer_kind="open",
                               key_points=["回転速度", "ほぼ一定"]))
    v = await build_judge("astrochart").judge(_item(s, "回転速度は半径によらずほぼ一定"))
    assert v.verdict == "unscored" and "astrochart:<model spec>" in v.reason
    assert v.metrics["rouge_l"] > 0.5 and 0 < v.metrics["bleu4"] <= 1


async def test_open_answer_key_point_share() -> None:
    s = Sample(id="o", benchmark="astrochart", question="Summarise.", answers=["Flat rotation curve; dark matter."],
               astro=AstroMeta(qa_type="AQA", category="KB-Summary", answer_kind="open",
                               key_points=["flat rotation curve", "dark matter halo", "radius up to 30 kpc"]))
    backend = ScriptedBackend('{"covered": [1, 2], "reasoning": "mentions both"}')
    v = await AstroChartJudge(backend).judge(_item(s, "The curve stays flat, implying a dark matter halo."))
    assert v.score == pytest.approx(2 / 3) and v.verdict == "correct" and v.decided_by == "astro_keypoints"
    assert v.metrics["keypoint_score"] == pytest.approx(2 / 3) and "rouge_l" in v.metrics
    prompt = backend.requests[0].prompt
    assert "1. flat rotation curve\n2. dark matter halo\n3. radius up to 30 kpc" in prompt
    assert backend.requests[0].config.temperature == 0.0


def test_keypoint_reply_parsing_rejects_out_of_range() -> None:
    assert parse_keypoint_reply('{"covered": [1, "3", 3]}', 3) == [1, 3]
    assert parse_keypoint_reply('{"covered": [4]}', 3) is None
    assert parse_keypoint_reply("points 1 and 2", 3) is None


async def test_unparseable_keypoint_reply_is_unscored() -> None:
    s = Sample(id="o", benchmark="astrochart", question="q", answers=["a"],
               astro=AstroMeta(qa_type="FQA", category="Summary", answer_kind="open", key_points=["a"]))
    backend = ScriptedBackend("all of them", '{"covered": [2]}', "still none")
    v = await AstroChartJudge(backend).judge(_item(s, "a"))
    assert v.verdict == "unscored" and "still none" in v.reason and "after 3 attempt(s)" in v.reason
    assert "numbers in 1..1" in backend.requests[2].prompt  # the model is told what was wrong


async def test_non_astro_items_are_unscored() -> None:
    v = await build_judge("astrochart").judge(JudgeInput(question="q", references=("1",), response="1"))
    assert v.verdict == "unscored"


# --- DomainCQA Appendix G.1: values extracted before scoring; Appendix G / §5.1: routing; choice options ---------

def _point(question: str, answer: str, lo: float, hi: float, **extra: object) -> Sample:
    return Sample(id="p1", benchmark="astrochart", question=question, answers=[answer],
                  astro=AstroMeta(qa_type="FQA", category="Data", aspect="Point", axis_min=lo, axis_max=hi, **extra))


async def test_llm_extracts_values_for_every_numeric_item() -> None:
    s = _point("What velocity (km/s) is reached at 300 Mpc?", "21390", 0, 32000)
    backend = ScriptedBackend('[{"value": 21000, "unit": "km/s"}]')
    v = await AstroChartJudge(backend).judge(_item(s, "At 300 Mpc the velocity is about 21,000 km/s."))
    assert v.decided_by == "astro_numeric" and v.score == pytest.approx(1 - 390 / 32000)
    assert v.extracted_answer == "21000 km s^-1" and "first guess" in v.reason
    prompt = backend.requests[0].prompt
    assert "At 300 Mpc the velocity is about 21,000 km/s." in prompt and "What velocity" in prompt
    assert backend.requests[0].config.temperature == 0.0


async def test_llm_extraction_is_validated_retried_then_unscored_never_zero() -> None:
    s = _point("What velocity?", "21000", 0, 30000)
    retried = ScriptedBackend("about twenty thousand", '```json\n[21000]\n```')
    v = await AstroChartJudge(retried).judge(_item(s, "2.1e4"))
    assert v.score == 1.0 and "after 1 unusable reply" in v.reason
    again = retried.requests[1]
    assert "no JSON list found" in again.prompt and again.context[0].answer == "about twenty thousand"
    bad = ScriptedBackend('[true]', '{"values": "many"}', '["21000 or 22000"]')
    v = await AstroChartJudge(bad).judge(_item(s, "2.1e4"))
    assert v.verdict == "unscored" and v.score is None and "after 3 attempt(s)" in v.reason
    assert "astrochart/p1" in v.reason and len(bad.requests) == 3


async def test_llm_extraction_is_kept_per_question_and_response() -> None:
    backend = ScriptedBackend("[21000]")
    judge = AstroChartJudge(backend)
    for ref in ("21000", "20000"):  # same response, other reference: one extraction call
        await judge.judge(_item(_point("What velocity?", ref, 0, 30000), "2.1e4 km/s"))
    assert len(backend.requests) == 1
    assert "astro_values-1" in judge.prompt_version


async def test_no_model_undecided_when_values_cannot_be_isolated() -> None:
    s = _point("What is the flux?", "3", 0, 10)
    v = await build_judge("astrochart").judge(_item(s, "At z = 0.5 the flux is 3 mJy."))
    assert v.verdict == "undecided" and v.score is None and "cannot isolate" in v.reason
    assert "astrochart:<model spec>" in v.reason


async def test_llm_range_for_one_reference_scores_its_mean() -> None:
    s = _point("What velocity?", "21000", 0, 30000)
    v = await AstroChartJudge(ScriptedBackend("[20000, 22000]")).judge(_item(s, "between 2.0 and 2.2 × 10^4 km/s"))
    assert v.score == 1.0


async def test_exact_derivation_uses_the_llm_values() -> None:
    s = Sample(id="c", benchmark="astrochart", question="How many curves are drawn?", answers=["4"],
               astro=AstroMeta(qa_type="FQA", category="Visual", aspect="Style"))
    v = await AstroChartJudge(ScriptedBackend("[4]")).judge(_item(s, "I count four curves (4)."))
    assert v.decided_by == "astro_exact" and v.score == 1.0
    v = await AstroChartJudge(ScriptedBackend("[4, 5]")).judge(_item(s, "4 or 5"))
    assert v.score == 0.0  # exact: not fully correct


async def test_choice_compares_the_chosen_option() -> None:
    async def verdict(question: str, reference: str, response: str) -> str:
        c = Sample(id="c", benchmark="astrochart", question=question, answers=[reference],
                   astro=AstroMeta(qa_type="FQA", category="Visual", aspect="Color", answer_kind="choice"))
        return (await build_judge("astrochart").judge(_item(c, response))).verdict

    q = "Which colour is the T = 10000 K curve?"
    listed = q + " (A) red (B) blue (C) green"
    assert await verdict(q, "blue", "The T = 10000 K curve is blue.") == "correct"
    assert await verdict(q, "blue", "Reasoning about red and blue...\nAnswer: blue") == "correct"
    assert await verdict(listed, "B", "It is drawn in blue.") == "correct"
    assert await verdict(listed, "B", "Either red or blue.") == "undecided"  # two of the listed options
    assert await verdict(q, "blue", "The T = 10000 K curve is red, not blue.") == "incorrect"
    assert await verdict(listed, "(B) blue", "The curve is red.") == "incorrect"


async def test_open_item_without_key_points_has_them_extracted_by_the_judge() -> None:
    """DomainCQA G.2: the judge extracts the reference's and the answer's key points, then matches them; a Visual
    item without answer_kind or key_points is routed there (it was unscored: "open item without key_points")."""
    s = Sample(id="v", benchmark="astrochart", question="What colour is the T = 10000 K curve?", answers=["blue"],
               astro=AstroMeta(qa_type="FQA", category="Visual", aspect="Color"))
    backend = ScriptedBackend('{"reference_points": [], "covered": []}',
                              '{"reference_points": ["the curve is blue"], "answer_points": ["blue curve"], '
                              '"covered": [1], "reasoning": "same colour"}')
    v = await AstroChartJudge(backend).judge(_item(s, "The T = 10000 K curve is blue."))
    assert v.decided_by == "astro_keypoints" and v.score == 1.0 and v.reason == "same colour (after 1 unusable reply)"
    assert "[reference answer]: blue" in backend.requests[0].prompt and "reference_points" in backend.requests[0].prompt


async def test_no_model_fewer_values_score_zero_as_algorithm_3_steps_5_6() -> None:
    """DomainCQA Algorithm 3 steps 5-6: fewer predicted values than reference values (or none) → S_final = 0. Such
    replies were undecided, so a model that declined or gave only some values left the mean (issue 21)."""
    s = Sample(id="p2", benchmark="astrochart", question="What are the two peak velocities (km/s)?",
               answers=["200, 350"], astro=AstroMeta(qa_type="FQA", category="Data", aspect="Point", axis_min=0,
                                                     axis_max=500))
    for response in ("The chart does not show it.", "Answer: 200 km/s"):
        v = await build_judge("astrochart").judge(_item(s, response))
        assert v.verdict == "incorrect" and v.score == 0.0 and "steps 5-6" in v.reason, v.reason


async def test_no_model_derivation_reads_the_result_after_the_last_equals() -> None:
    s = Sample(id="c2", benchmark="astrochart", question="How much hotter is star A than star B (K)?",
               answers=["1500"], astro=AstroMeta(qa_type="FQA", category="Data", aspect="Calculation"))
    reply = "Star A is 6000 K and B is 4500 K.\nAnswer: 6000 K - 4500 K = 1500 K"
    v = await build_judge("astrochart").judge(_item(s, reply))
    assert v.decided_by == "astro_exact" and v.score == 1.0, v.reason
