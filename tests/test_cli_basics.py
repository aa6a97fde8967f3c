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
