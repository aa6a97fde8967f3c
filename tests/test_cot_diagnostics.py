"""CoT diagnostics (issue 13, item 4): crafted truncated, answer-less and looping replies are flagged, clean ones
are not — in the pure function and in summary.json after a run against a real local server."""

from __future__ import annotations

import json

import pytest

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
from zuhyo.evaluate.diagnostics import LOOP_MIN_COVERAGE, is_looping, loop_coverage, reply_diagnostics
from zuhyo.evaluate.records import PredictionRecord
from zuhyo.evaluate.session import run_eval

LOOP_JA = "まず、グラフの棒を左から順に読みます。" * 40
LOOP_EN = "Let me look at the chart again. " * 30
CLEAN_JA = ("グラフの縦軸は研究者数(万人)で、日本は67.8万人、英国は30.3万人、ドイツは45.1万人、フランスは32.1万人です。"
            "日本より少ない国の合計は107.5万人で、日本との差は39.7万人です。\nAnswer: 39.7万人")
CLEAN_TABLE = "\n".join(f"{year}年度: {v}%" for year, v in zip(range(2010, 2024), range(31, 45), strict=True)) + \
    "\nThe values rise every year by one point.\nAnswer: 13ポイント"
LONG_UNIQUE = " ".join(f"item{i} value {i * 7}" for i in range(80))


def _rec(sid: str, text: str, prompt: str = "cot", finish: str = "stop") -> PredictionRecord:
    return PredictionRecord(benchmark="b", sample_id=sid, model="m", prompt=prompt, run_index=0, status="ok",
                            response=text, finish_reason=finish, usage={"completion_tokens": len(text)})


def test_loop_detector_flags_loops_and_not_clean_chains():
    assert is_looping(LOOP_JA) and is_looping(LOOP_EN)
    assert loop_coverage(LOOP_JA) > 0.95
    for clean in (CLEAN_JA, CLEAN_TABLE, LONG_UNIQUE, "84.7万人", ""):
        assert loop_coverage(clean) < LOOP_MIN_COVERAGE, clean[:40]
    # A loop taking half of an otherwise clean reply is flagged; a short repeated phrase is not.
    assert is_looping(CLEAN_JA + "\n" + "同じ計算を繰り返します。" * 30)
    assert not is_looping(CLEAN_JA + "\n" + "同じ計算を繰り返します。" * 3)


def test_reply_diagnostics_counts_each_kind():
    recs = [_rec("clean", CLEAN_JA), _rec("table", CLEAN_TABLE), _rec("loop", LOOP_JA + "\nAnswer: 3"),
            _rec("cut", "Step 1: the first bar reads", finish="length"), _rec("noanswer", "I think it is 5."),
            _rec("d1", "5", prompt="direct"), _rec("d2", LOOP_EN, prompt="direct")]
    rows = {r["prompt"]: r for r in reply_diagnostics(recs)}
    cot = rows["cot"]
    assert cot["n_replies"] == 5
    assert (cot["n_truncated"], cot["n_no_final_answer"], cot["n_looping"]) == (1, 2, 1)
    assert cot["examples"] == {"truncated": ["b/cut run 0"], "no_final_answer": ["b/cut run 0", "b/noanswer run 0"],
                               "looping": ["b/loop run 0"]}
    assert cot["looping_share"] == pytest.approx(0.2)
    assert cot["median_reply_chars"] == sorted(len(r.response or "") for r in recs[:5])[2]
    direct = rows["direct"]
    assert direct["n_no_final_answer"] is None and direct["no_final_answer_share"] is None  # Direct asks for none
    assert (direct["n_truncated"], direct["n_looping"]) == (0, 1)


def test_summary_json_holds_diagnostics_per_model_and_prompt(tmp_path, fake_server):
    samples = load_benchmark("sample-ja").samples[:4]
    # The server wraps CoT replies as "...\nAnswer: <reply>": an empty reply leaves the CoT answer line empty.
    key = {samples[0].question: LOOP_JA, samples[1].question: samples[1].answers[0], samples[2].question: "",
           samples[3].question: LONG_UNIQUE}
    server = fake_server(answers=key)
    config = EvalConfig(benchmarks=(BenchmarkSpec("sample-ja"),), models=(f"openai:fake@{server.base_url}",),
                        out=tmp_path / "run", prompts=("direct", "cot"), runs=1, limit=4, judge="rules",
                        model_options={"max_response_chars": "1000"})  # the long reply is cut: finish_reason length
    run_eval(config)
    doc = json.loads((tmp_path / "run" / "summary.json").read_text())
    rows = {r["prompt"]: r for r in doc["diagnostics"]}
    ids = [s.id for s in samples]
    assert rows["cot"]["examples"] == {"truncated": [f"sample-ja/{ids[3]} run 0"],
                                       "no_final_answer": [f"sample-ja/{ids[2]} run 0"],
                                       "looping": [f"sample-ja/{ids[0]} run 0"]}
    assert rows["direct"]["examples"] == {"truncated": [f"sample-ja/{ids[3]} run 0"],
                                          "looping": [f"sample-ja/{ids[0]} run 0"]}
    assert rows["direct"]["n_replies"] == rows["cot"]["n_replies"] == 4
    assert rows["cot"]["median_completion_tokens"] is not None


def test_cli_prints_a_diagnostics_line_for_flagged_replies(tmp_path, fake_server):
    from conftest import run_cli

    samples = load_benchmark("sample-ja").samples[:2]
    server = fake_server(answers={samples[0].question: LOOP_EN, samples[1].question: samples[1].answers[0]})
    spec = f"openai:fake@{server.base_url}"
    proc = run_cli("eval", "--bench", "sample-ja", "--limit", "2", "--runs", "1", "--prompt", "direct",
                   "--judge", "rules", "--model", spec, "--out", str(tmp_path / "run"), "--quiet")
    assert f"diagnostics {spec} / direct: 1/2 repetition loop" in proc.stdout
