"""Answer cleaning (issue 7, item 3): by default a judge or metric sees what the benchmark's official pipeline
passes (simple-evals-mm's last ``Answer:`` for CoT, the raw prediction for ChartQA / ChartQAPro); ``lenient``
is a named option, recorded in summary.json. Also coverage in summaries (item 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark
from zuhyo.evaluate.judges.answer_extraction import scored_answer
from zuhyo.evaluate.metrics.chartqapro import chartqapro
from zuhyo.evaluate.metrics.relaxed import chartqa_relaxed
from zuhyo.schema import Sample


@pytest.mark.parametrize(("reply", "expected"), [
    ("Answer: 42%\nThe answer is based on the 2022 bar.", "42%"),
    ("Answer: 42\n回答：四十二", "42"),
    ("Step 1: read the bars.\nAnswer: first\nmore text\nAnswer:  second  ", "second"),
    ("Answer：東京都", "東京都"),
    ("no marker at all", "no marker at all"),
    ("answer: lower-case is not the marker simple-evals-mm reads", "answer: lower-case is not the marker "
                                                                   "simple-evals-mm reads"),
    ("Final Answer: **12**", "**12**"),  # faithful keeps the Markdown the official pipeline would pass
])
def test_faithful_cot_extraction_is_simple_evals_mm(reply: str, expected: str) -> None:
    assert scored_answer(reply, "cot", "hakusho") == expected
    assert scored_answer(reply, "cot+ocr", "generic") == expected


def test_faithful_direct_is_the_raw_reply_and_lenient_cleans() -> None:
    for raw in ("**Facebook**", "`12`", "$12", "Yes.", " Yes "):
        assert scored_answer(raw, "direct", "chartqa") == raw
    assert [scored_answer(r, "direct", "chartqa", "lenient") for r in ("**Facebook**", "`12`", "$12", "Yes.",
                                                                       " Yes ")] == \
        ["Facebook", "12", "12", "Yes", "Yes"]
    # the lenient cleaning keeps today's extra markers
    assert scored_answer("Answer: 42%\nThe answer is based on the 2022 bar.", "cot", "hakusho", "lenient") == \
        "based on the 2022 bar"
    with pytest.raises(ValueError, match="unknown answer cleaning 'tidy'"):
        scored_answer("x", "direct", "chartqa", "tidy")


def test_chartqapro_cot_reads_the_answer_is_sentence() -> None:
    reply = "The chart shows two bars.\nThe answer is 12."
    assert scored_answer(reply, "cot", "chartqapro") == "12."
    s = Sample(id="1", benchmark="chartqapro", question="q", answers=["12"])
    assert chartqapro(s, scored_answer(reply, "cot", "chartqapro")) == 1.0  # the official code strips '.'


@pytest.mark.parametrize("raw", ["**Facebook**", "`Facebook`", "Facebook.", " Facebook "])
def test_chartqa_metric_scores_raw_predictions_like_pix2struct(raw: str) -> None:
    s = Sample(id="1", benchmark="chartqa", question="Which?", answers=["Facebook"])
    assert chartqa_relaxed(s, raw) == 0.0
    assert chartqa_relaxed(s, scored_answer(raw, "direct", "chartqa", "lenient")) == 1.0


def test_eval_and_score_record_the_cleaning(tmp_path: Path, chartqa_dir: Path, fake_server) -> None:
    samples = load_benchmark("chartqa", BenchmarkSource(path=chartqa_dir)).samples[:6]
    assert [s.answer for s in samples] == ["36", "52", "Nightline", "The Colbert Report", "Yes", "3"]
    replies = ["`36`", "$52", "**Nightline**", "The Colbert Report", "Yes.", "3"]
    model = fake_server(answers={s.question: r for s, r in zip(samples, replies, strict=True)})
    out = tmp_path / "run"
    first = run_cli_json("eval", "--bench", "chartqa", "--path", str(chartqa_dir), "--limit", "6",
                         "--model", f"openai:m@{model.base_url}", "--runs", "1", "--prompt", "direct",
                         "--out", str(out), "--quiet")
    (e,) = first["entries"]
    assert e["judge"] == "auto" and e["answer_cleaning"] == "faithful"
    assert e["mean"] == pytest.approx(2 / 6)  # only the two clean replies pass the official metric
    assert first["scoring"]["answer_cleaning"] == "faithful"
    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert {j["extracted_answer"] for j in judgments} == set(replies)  # what the metric saw, raw

    lenient = run_cli_json("score", str(out), "--judge", "auto", "--answer-cleaning", "lenient", "--quiet")
    (e2,) = lenient["entries"]
    assert e2["mean"] == 1.0 and e2["answer_cleaning"] == "lenient"
    assert lenient["scoring"]["judged"] == 6 and lenient["scoring"]["reused"] == 0  # not reused across cleanings
    saved = json.loads((out / "summary.json").read_text())
    assert saved["entries"][0]["answer_cleaning"] == "lenient"

    again = run_cli_json("score", str(out), "--judge", "auto", "--quiet")
    assert again["entries"][0]["mean"] == pytest.approx(2 / 6) and again["scoring"]["judged"] == 6

    bad = run_cli("score", str(out), "--answer-cleaning", "tidy", check=False)
    assert bad.returncode != 0 and "unknown answer cleaning 'tidy'" in bad.stderr


def test_abstentions_lower_the_score_and_coverage_is_reported(tmp_path: Path, fake_server) -> None:
    """A model that abstains on most items scored 100 ± 0 with --judge rules (abstentions left the mean)."""
    samples = load_benchmark("sample-ja", BenchmarkSource()).samples
    n = len(samples)
    replies = {s.question: (s.answer if i % 3 == 0 else "わかりません") for i, s in enumerate(samples)}
    n_right = sum(1 for i in range(n) if i % 3 == 0)
    model = fake_server(answers=replies)
    out = tmp_path / "run"
    proc = run_cli("eval", "--bench", "sample-ja", "--model", f"openai:m@{model.base_url}", "--runs", "1",
                   "--prompt", "direct", "--judge", "rules", "--out", str(out), "--quiet", "--json")
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    (e,) = summary["entries"]
    assert e["n_total"] == n and e["coverage"] == pytest.approx(e["n_scored"] / n)
    assert e["n_scored"] >= n - n_right  # every abstention is decided (incorrect)
    assert e["mean"] < 0.5
    assert e["mean_unscored_as_wrong"] <= e["mean"]
    assert e["mean_unscored_as_wrong"] == pytest.approx(sum(
        1 for j in map(json.loads, (out / "judgments.jsonl").read_text().splitlines())
        if j["verdict"] == "correct") / n)
    for axis in e["by_category"].values():
        for cell in axis.values():
            assert cell["n_total"] >= cell["n"] and "coverage" in cell


def test_low_coverage_warns_on_stderr_and_the_table_shows_it(tmp_path: Path, fake_server) -> None:
    model = fake_server(default_answer="ゾウ")  # a word the rules can neither match nor refute: undecided
    proc = run_cli("eval", "--bench", "sample-ja", "--model", f"openai:m@{model.base_url}", "--runs", "1",
                   "--prompt", "direct", "--judge", "rules", "--out", str(tmp_path / "run"), "--quiet", "--json")
    (e,) = json.loads(proc.stdout.strip().splitlines()[-1])["entries"]
    assert e["coverage"] < 0.9 and e["n_unscored"] > 0
    assert "warning:" in proc.stderr and f"covers {e['n_scored']}/{e['n_total']}" in proc.stderr
    assert "counting them wrong gives" in proc.stderr
    table = run_cli("score", str(tmp_path / "run"), "--judge", "rules", "--quiet")
    assert f"{e['n_scored']}/{e['n_total']} (" in table.stdout and "coverage" in table.stdout
