"""CLI basics: startup stays light, `list` shows every registry, JSON output is one object."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import run_cli, run_cli_json

HEAVY = ("torch", "transformers", "ray", "rapidocr", "onnxruntime", "datasets", "matplotlib", "pyarrow")


def test_help_and_list_import_nothing_heavy():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from zuhyo.cli import app\n"
        "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0, r.output\n"
        "r = CliRunner().invoke(app, ['list']); assert r.exit_code == 0, r.output\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_list_json_has_every_registry():
    doc = run_cli_json("list")
    names = {k: {e["name"] for e in v} for k, v in doc.items()}
    assert {"chartqa", "charxiv", "chartqapro", "hakusho", "jgraphqa", "astrochart", "local", "sample-ja",
            "sample-astro"} <= names["benchmarks"]
    assert {"openai", "hf", "ocr"} <= names["model_backends"]
    assert {"rules", "llm", "cascade", "metric"} <= names["judges"]
    assert {"chartqa_relaxed", "chartqapro", "astro_numeric", "rouge_l", "bleu4"} <= names["metrics"]


def test_user_errors_print_without_traceback():
    proc = run_cli("eval", "--bench", "no-such-bench", "--model", "ocr", "--out", "/tmp/zuhyo-x", check=False)
    assert proc.returncode == 1
    assert "unknown benchmark 'no-such-bench'" in proc.stderr and "Traceback" not in proc.stderr


def test_flat_parquet_schema_matches_columns():
    from zuhyo.benchmarks.local import _flat_schema
    from zuhyo.schema import FLAT_COLUMNS

    assert tuple(_flat_schema().names) == FLAT_COLUMNS


def test_schema_round_trip_jsonl_and_parquet(tmp_path):
    from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark
    from zuhyo.benchmarks.local import load_local, write_parquet
    from zuhyo.schema import sample_from_json, sample_to_json

    ja = load_benchmark("sample-ja").samples + load_benchmark("sample-astro").samples
    for s in ja:
        assert sample_from_json(sample_to_json(s)) == s
    write_parquet(ja, tmp_path / "x.parquet")
    back = load_local(BenchmarkSource(path=tmp_path / "x.parquet"), True).samples
    assert back == ja
    assert json.loads(sample_to_json(ja[0]))["id"] == ja[0].id


# --- output conventions: results on stdout, progress and diagnostics on stderr ---------------------------------


def test_human_results_go_to_stdout_so_they_can_be_piped():
    listing = run_cli("list")
    assert "chartqa_relaxed" in listing.stdout and "sample-ja" in listing.stdout
    assert "chartqa_relaxed" not in listing.stderr
    info = run_cli("bench", "info", "sample-ja")
    assert info.stdout.startswith("sample-ja:") and "field coverage" in info.stdout
    stats = run_cli("analyze", "stats", "sample-ja")
    assert "sample-ja:" in stats.stdout and "questions" in stats.stdout and stats.stderr.strip() == ""


def test_json_keeps_stdout_to_one_object_and_help_shows_plain_flags():
    # With --json the human summary moves to stderr: stdout stays one JSON object (run_cli_json asserts that).
    assert run_cli_json("bench", "info", "sample-ja")["benchmark"] == "sample-ja"
    for cmd in (["list"], ["eval"], ["report"], ["bench", "info"], ["analyze", "stats"], ["export-inspect"]):
        help_text = run_cli(*cmd, "--help", env={"COLUMNS": "60"}).stdout
        assert "--json  " in help_text or "--json\n" in help_text, cmd
        assert "<bool>" not in help_text, (cmd, help_text)
        assert not [ln for ln in help_text.splitlines() if ln.rstrip().endswith("…")], (cmd, help_text)
    retries = run_cli("eval", "--help", env={"COLUMNS": "60"}).stdout
    assert "429/5xx/timeouts" in retries
    bad = run_cli("list", "--json=yes", check=False)
    assert bad.returncode == 2 and "does not take a value" in bad.stderr


def test_eval_and_score_default_to_the_same_judge():
    import typer.main

    from zuhyo.cli import app

    cmd = typer.main.get_command(app)
    defaults = {name: next(p.default for p in cmd.commands[name].params if p.name == "judge")  # type: ignore[attr-defined]
                for name in ("eval", "score")}
    assert defaults["eval"] == defaults["score"] == "auto"


def test_plain_progress_prints_a_line_every_interval_with_rate_and_errors():
    from zuhyo.cli.evaluation import PlainProgress

    now = [0.0]
    lines: list[str] = []
    reporter = PlainProgress(interval_s=5.0, clock=lambda: now[0], write=lines.append)
    with reporter.task("inference", 10) as advance:
        for i in range(10):
            now[0] += 1.0
            advance(1)
            if i in (2, 7):
                advance.add_errors(1)  # type: ignore[attr-defined]
    assert lines == ["inference: 5/10 (50.0 %), 1.0/s, 1 errors, 5s elapsed",
                     "inference: 10/10 (100.0 %), 1.0/s, 2 errors, 10s elapsed",
                     "inference: 10/10 (100.0 %), 1.0/s, 2 errors, 10s elapsed"]


def test_eval_to_a_log_file_prints_plain_progress_lines(tmp_path, fake_server):
    from zuhyo.benchmarks.base import load_benchmark

    samples = load_benchmark("sample-ja").samples
    server = fake_server(answers={s.question: s.answer for s in samples}, fail_rate=0.3, faults=("500",), seed=3)
    proc = run_cli("eval", "--bench", "sample-ja", "--model", f"openai:fake@{server.base_url}", "--runs", "1",
                   "--prompt", "direct", "--judge", "rules", "--retries", "0", "--out", str(tmp_path / "run"))
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    errors = summary["inference"]["errors"]
    assert errors > 0
    # stderr is a pipe here: no live bar, but a final plain line with done/total, rate and the error count.
    assert f"inference: {len(samples)}/{len(samples)} (100.0 %), " in proc.stderr
    assert f"/s, {errors} errors, " in proc.stderr
    assert "judging (rules): " in proc.stderr
    assert "zuhyo results" in proc.stdout and "zuhyo results" not in proc.stderr


def test_readme_example_output_folders_are_git_ignored():
    import re
    import shutil
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    outs = set(re.findall(r"--out (\S+)", (root / "README.md").read_text(encoding="utf-8")))
    outs |= {"zuhyo-demo/report/index.html"}
    assert {"runs/qwen", "report/", "export/sample-ja.jsonl"} <= outs, outs
    probes = [o.rstrip("/") + "/x" if o.endswith("/") else o for o in outs]
    proc = subprocess.run(["git", "check-ignore", "--no-index", *probes], cwd=root, capture_output=True, text=True)
    assert set(proc.stdout.split()) == set(probes), f"not ignored: {set(probes) - set(proc.stdout.split())}"


def test_command_lists_show_whole_summaries_not_cut_ones():
    """`zuhyo --help` and every group's help list each command with a whole first sentence (click cuts at ~45
    characters with '...' unless told otherwise)."""
    from typer.main import get_command

    from zuhyo.cli import app

    root = get_command(app)
    groups = [name for name, cmd in root.commands.items() if hasattr(cmd, "commands")]  # type: ignore[attr-defined]
    assert {"collect", "filter", "analyze", "bench", "images"} <= set(groups)
    for args in ([], *([g] for g in groups)):
        out = run_cli(*args, "--help", env={"COLUMNS": "80"}).stdout
        listing = out.split("Commands:", 1)[1]
        assert "..." not in listing and "…" not in listing, f"zuhyo {' '.join(args)} --help cuts a summary:\n{out}"
