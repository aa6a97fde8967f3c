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


def test_unscored_and_errored_items_follow_inspects_conventions(tmp_path: Path, fake_server):
    """sample-astro under the auto judge leaves open questions unscored; injected 500s leave errored items."""
    import json
    import math

    samples = load_benchmark("sample-astro").samples
    key = {s.question: (s.answer if i % 3 else "123456") for i, s in enumerate(samples)}
    server = fake_server(answers=key, fail_rate=0.25, faults=("500",), seed=1)
    out = tmp_path / "run"
    summary = run_cli_json("eval", "--bench", "sample-astro", "--model", f"openai:fake@{server.base_url}",
                           "--runs", "2", "--prompt", "direct", "--retries", "0", "--out", str(out), "--quiet")
    (entry,) = summary["entries"]
    assert entry["n_unscored"] > 0 and entry["n_errors"] > 0 and 0 < entry["mean"] < 1
    (path,) = run_cli_json("export-inspect", str(out))["files"]
    raw = json.loads(Path(path).read_text(encoding="utf-8"))  # Python reads the NaN constant Inspect writes
    unscored = [s["scores"]["auto"] for s in raw["samples"] if s["scores"] and
                math.isnan(s["scores"]["auto"]["value"])]
    assert len(unscored) == entry["n_unscored"]
    assert all(u["reason"] in ("undecided", "no_response", "refusal", "grader_failed") for u in unscored)
    assert all(u["metadata"]["verdict"] in ("unscored", "undecided") for u in unscored)

    inspect_log = pytest.importorskip("inspect_ai.log", reason="inspect-ai not installed")
    log = inspect_log.read_eval_log(path)  # failed with 'scores.auto.value ... input_value=None' before
    assert len(log.samples) == len(samples) * 2
    errored = [s for s in log.samples if s.error is not None]
    assert len(errored) == entry["n_errors"] and all(not s.scores for s in errored)
    assert all("500" in s.error.message or "HTTP" in s.error.message for s in errored), errored[0].error
    for run in entry["runs"]:
        scores = [s.scores["auto"] for s in log.samples if s.epoch == run["run_index"] + 1 and s.scores]
        decided = [sc.value for sc in scores if not math.isnan(sc.value)]
        assert len(decided) == run["n_scored"] and len(scores) - len(decided) == run["n_unscored"]
        assert sum(decided) / len(decided) == pytest.approx(run["accuracy"])
    assert log.results.scores[0].unscored_samples == entry["n_unscored"]
