"""The judging stage: judge failures are unscored and retried on the next `zuhyo score`; calls are cached."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli_json

from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark


def _judge_reply(correct: bool) -> str:
    return json.dumps({"extracted_final_answer": "x", "reasoning": "compared with the reference",
                       "correct": "yes" if correct else "no", "confidence": 90})


def test_llm_judge_down_then_up(tmp_path: Path, chartqa_dir: Path, fake_server):
    samples = load_benchmark("chartqa", BenchmarkSource(path=chartqa_dir)).samples[:6]
    model = fake_server(answers={s.question: s.answer for s in samples})
    out = tmp_path / "run"
    run_cli_json("eval", "--bench", "chartqa", "--path", str(chartqa_dir), "--limit", "6",
                 "--model", f"openai:m@{model.base_url}", "--runs", "2", "--prompt", "direct", "--judge", "none",
                 "--out", str(out), "--quiet")
    down = fake_server(fail_rate=1.0, faults=("500",))
    judge = f"llm:openai:judge@{down.base_url}"
    first = run_cli_json("score", str(out), "--judge", judge, "--quiet")
    (e,) = first["entries"]
    assert e["n_scored"] == 0 and e["n_unscored"] == 12 and e["mean"] is None  # never counted as wrong
    assert first["scoring"]["judge_errors"] == 12
    # Judge verdicts: the first three samples correct, the others not.
    verdicts = {s.question: _judge_reply(i < 3) for i, s in enumerate(samples)}
    down.stop()
    up = fake_server(answers=verdicts, port=down.port)
    second = run_cli_json("score", str(out), "--judge", judge, "--quiet")
    (e2,) = second["entries"]
    assert e2["n_scored"] == 12 and e2["n_unscored"] == 0 and e2["mean"] == 0.5
    # Identical responses across the two runs are judged once (the cache), then reused on a third pass.
    assert up.state.requests == 6 and second["scoring"]["cache_hits"] == 6
    third = run_cli_json("score", str(out), "--judge", judge, "--quiet")
    assert third["scoring"]["reused"] == 12 and third["scoring"]["judged"] == 0 and up.state.requests == 6
