"""`zuhyo export-inspect`: the logs are valid Inspect EvalLogs (contract test when inspect-ai is installed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli_json

from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark


def test_export_inspect_logs_read_back(tmp_path: Path, chartqa_dir: Path, fake_server):
    samples = load_benchmark("chartqa", BenchmarkSource(path=chartqa_dir)).samples[:8]
    key = {s.question: (s.answer if i % 2 == 0 else "Antarctica") for i, s in enumerate(samples)}
    server = fake_server(answers=key)
    out = tmp_path / "run"
    summary = run_cli_json("eval", "--bench", "chartqa", "--path", str(chartqa_dir), "--model",
                           f"openai:fake@{server.base_url}", "--runs", "2", "--prompt", "both", "--limit", "8",
                           "--out", str(out), "--quiet")
    exported = run_cli_json("export-inspect", str(out))
    assert exported["count"] == 2
    inspect_log = pytest.importorskip("inspect_ai.log", reason="inspect-ai not installed")
    means = {e["prompt"]: e["mean"] for e in summary["entries"]}
    for f in exported["files"]:
        log = inspect_log.read_eval_log(f)
        assert log.eval.model == f"openai:fake@{server.base_url}"
        assert log.eval.dataset.name == "chartqa"
        assert len(log.samples) == 8 * 2 and {s.epoch for s in log.samples} == {1, 2}
        prompt = log.eval.task_args["prompt"]
        score = log.results.scores[0]
        assert score.metrics["accuracy"].value == pytest.approx(means[prompt])
        values = [s.scores[score.name].value for s in log.samples]
        assert sum(values) / len(values) == pytest.approx(means[prompt])
