"""Judge repetition (issue 13, item 3): per-run judging calls the judge once per run even for identical replies
(HakushoBench §5.1), the shared cache once per distinct reply; the summary says which, and per-run judging reports
the judge's own variance on items whose replies did not change."""

from __future__ import annotations

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
from zuhyo.evaluate.session import rescore, run_eval

YES = "extracted_final_answer: x\nreasoning: matches\ncorrect: yes\nconfidence: 90"
NO = "extracted_final_answer: x\nreasoning: differs\ncorrect: no\nconfidence: 90"
RUNS = 3
LIMIT = 2


def _setup(tmp_path, fake_server, judge_answers=None):
    samples = load_benchmark("sample-ja").samples[:LIMIT]
    model = fake_server(answers={s.question: s.answers[0] for s in samples})  # the same reply in every run
    judge = fake_server(answers=judge_answers or {}, default_answer=YES)
    return samples, model, judge


def _config(tmp_path, model, judge, repeat: str) -> EvalConfig:
    return EvalConfig(benchmarks=(BenchmarkSpec("sample-ja"),), models=(f"openai:fake@{model.base_url}",),
                      out=tmp_path / "run", prompts=("direct",), runs=RUNS, limit=LIMIT,
                      judge=f"llm:openai:judge@{judge.base_url}", judge_repeat=repeat)


def test_per_run_judges_identical_replies_once_per_run(tmp_path, fake_server):
    _, model, judge = _setup(tmp_path, fake_server)
    summary = run_eval(_config(tmp_path, model, judge, "per-run"))
    assert judge.state.requests == LIMIT * RUNS
    (entry,) = summary["entries"]
    assert entry["judge_repeat"] == "per-run" and summary["scoring"]["judge_repeat"] == "per-run"
    assert entry["n_scored"] == LIMIT * RUNS
    # Resuming judges nothing again: the per-run cache and judgments are keyed by run.
    run_eval(_config(tmp_path, model, judge, "per-run"))
    assert judge.state.requests == LIMIT * RUNS


def test_shared_cache_judges_identical_replies_once(tmp_path, fake_server):
    _, model, judge = _setup(tmp_path, fake_server)
    summary = run_eval(_config(tmp_path, model, judge, "shared"))
    assert judge.state.requests == LIMIT
    (entry,) = summary["entries"]
    assert entry["judge_repeat"] == "shared" and entry["judge_variance"] is None
    assert summary["scoring"]["cache_hits"] == LIMIT * (RUNS - 1)
    # Switching the run set to per-run judging re-judges every run (shared verdicts are not reused for it).
    again = rescore(tmp_path / "run", f"llm:openai:judge@{judge.base_url}", judge_repeat="per-run")
    assert judge.state.requests == LIMIT + LIMIT * RUNS
    assert again["entries"][0]["judge_repeat"] == "per-run"


def test_judge_variance_on_unchanged_replies(tmp_path, fake_server):
    samples = load_benchmark("sample-ja").samples[:LIMIT]
    # The judge flips on the first item (yes, no, yes) and is steady on the second.
    _, model, judge = _setup(tmp_path, fake_server, judge_answers={samples[0].question: [YES, NO, YES]})
    summary = run_eval(_config(tmp_path, model, judge, "per-run"))
    (entry,) = summary["entries"]
    var = entry["judge_variance"]
    assert var["n_items"] == LIMIT and var["n_inconsistent"] == 1 and var["inconsistent_share"] == 0.5
    # Item 1's scores 1, 0, 1 have std 0.57735; item 2's are all 1.
    assert abs(var["mean_item_std"] - 0.57735 / 2) < 1e-4
    assert sorted(r["accuracy"] for r in entry["runs"]) == [0.5, 1.0, 1.0]  # which run got "no" may vary


def test_report_shows_the_judge_variance(tmp_path, fake_server):
    from zuhyo.report.build import ReportOptions, build_report

    samples = load_benchmark("sample-ja").samples[:LIMIT]
    _, model, judge = _setup(tmp_path, fake_server, judge_answers={samples[0].question: [YES, NO, YES]})
    run_eval(_config(tmp_path, model, judge, "per-run"))
    doc = build_report([tmp_path / "run"], tmp_path / "report", ReportOptions(plots=False, n_resamples=200))
    (row,) = doc["judge_variance"]
    assert (row["benchmark"], row["prompt"], row["n_items"], row["n_inconsistent"]) == ("sample-ja", "direct", 2, 1)
    md = (tmp_path / "report" / "tables" / "judge_variance.md").read_text(encoding="utf-8")
    assert "| fake · sample-ja · Direct | 2 | 1 | 50.0% |" in md
    assert "Judge variance across runs" in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")


def test_report_has_no_judge_variance_table_for_shared_judging(tmp_path, fake_server):
    from zuhyo.report.build import ReportOptions, build_report

    _, model, judge = _setup(tmp_path, fake_server)
    run_eval(_config(tmp_path, model, judge, "shared"))
    doc = build_report([tmp_path / "run"], tmp_path / "report", ReportOptions(plots=False, n_resamples=200))
    assert doc["judge_variance"] == [] and "judge_variance" not in doc["tables"]


def test_cli_prints_the_judge_variance(tmp_path, fake_server):
    from conftest import run_cli

    samples = load_benchmark("sample-ja").samples[:LIMIT]
    _, model, judge = _setup(tmp_path, fake_server, judge_answers={samples[0].question: [YES, NO, YES]})
    spec = f"openai:fake@{model.base_url}"
    proc = run_cli("eval", "--bench", "sample-ja", "--limit", str(LIMIT), "--runs", str(RUNS), "--prompt", "direct",
                   "--model", spec, "--judge", f"llm:openai:judge@{judge.base_url}", "--judge-repeat", "per-run",
                   "--out", str(tmp_path / "run"), "--quiet")
    assert f"judge variance {spec} / sample-ja / direct: 1 of 2 items with unchanged replies" in proc.stdout
    assert "per-run" in proc.stdout  # the judging line names the mode


def test_score_keeps_the_run_sets_judge_repeat_by_default(tmp_path, fake_server):
    _, model, judge = _setup(tmp_path, fake_server)
    run_eval(_config(tmp_path, model, judge, "per-run"))
    calls = judge.state.requests
    again = rescore(tmp_path / "run", f"llm:openai:judge@{judge.base_url}")  # no judge_repeat: per-run from run.json
    assert again["scoring"]["judge_repeat"] == "per-run" and again["scoring"]["reused"] == LIMIT * RUNS
    assert judge.state.requests == calls
