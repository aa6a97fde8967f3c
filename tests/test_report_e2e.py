"""End to end: two run sets made by the real `zuhyo eval` (two models, Direct and CoT, a HakushoBench-style and an
AstroChart benchmark), then `zuhyo report` in a subprocess; tables must agree with each run set's summary.json."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json
from test_report_support import answer_key, eval_into, write_astro, write_hakusho

from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

MODEL_A = "モデルA"  # Japanese name: the plots must render it with the CJK font
MODEL_B = "gpt-fake"
JUDGES = {"hakusho": "rules", "astrochart": "astrochart"}


@pytest.fixture(scope="module")
def runsets(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("report_runs")
    hpath, hrows = write_hakusho(root / "data")
    apath, arows = write_astro(root / "data")
    key_a = {**answer_key(hrows, "hakusho", lambda i: i % 4 != 3, lambda i: i % 5 != 4),
             **answer_key(arows, "astro", lambda i: i % 4 != 3, lambda i: True)}
    key_b = {**answer_key(hrows, "hakusho", lambda i: i % 3 != 2, lambda i: i % 7 != 6),
             **answer_key(arows, "astro", lambda i: i % 2 == 0, lambda i: i % 3 != 0)}
    srv_a = FakeOpenAIServer(ServerState(answers=key_a)).start()
    srv_b = FakeOpenAIServer(ServerState(answers=key_b, fail_rate=0.04, faults=("500",), seed=3)).start()
    try:
        # One benchmark per run set: `zuhyo eval` writes summary.json for the benchmarks of its last call only,
        # and these tests compare against summary.json. Both models are in both run sets.
        d1, d2 = root / "set1", root / "set2"
        eval_into(d1, "hakusho", hpath, srv_a.base_url, MODEL_A, "rules")
        eval_into(d1, "hakusho", hpath, srv_b.base_url, MODEL_B, "rules", "--retries", "0")
        eval_into(d2, "astrochart", apath, srv_a.base_url, MODEL_A, "astrochart")
        eval_into(d2, "astrochart", apath, srv_b.base_url, MODEL_B, "astrochart", "--retries", "0")
        return {"root": root, "dirs": [d1, d2], "model_a": f"openai:{MODEL_A}@{srv_a.base_url}",
                "model_b": f"openai:{MODEL_B}@{srv_b.base_url}", "n_hakusho": len(hrows), "n_astro": len(arows)}
    finally:
        srv_a.stop()
        srv_b.stop()


@pytest.fixture(scope="module")
def report(runsets) -> dict:
    out = runsets["root"] / "report"
    doc = run_cli_json("report", *map(str, runsets["dirs"]), "--out", str(out), "--tag",
                       f"{runsets['model_a']}=open", "--tag", f"{runsets['model_b']}=proprietary",
                       "--min-category-items", "10", "--bootstrap", "2000")
    return {"out": out, "doc": doc}


def _summary_entries(runsets: dict) -> dict[tuple[str, str, str], dict]:
    """(model, benchmark, prompt) → summary.json entry; the same cell in both sets must agree."""
    out: dict[tuple[str, str, str], dict] = {}
    for d in runsets["dirs"]:
        for e in json.loads((d / "summary.json").read_text())["entries"]:
            if e["judge"] != JUDGES[e["benchmark"]]:
                continue  # summary.json has an (empty) entry for every judge of the run set
            k = (e["model"], e["benchmark"], e["prompt"])
            if k in out:
                assert out[k]["mean"] == e["mean"], k
            out[k] = e
    return out


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_files_written(report):
    out = report["out"]
    assert (out / "index.html").stat().st_size > 10_000
    for name in ("main", "hakusho_image_type_direct", "hakusho_flag_cot", "astrochart_domaincqa_direct",
                 "astrochart_metrics", "gap", "comparisons"):
        for suffix in (".md", ".csv", ".tex"):
            assert (out / "tables" / f"{name}{suffix}").is_file(), name + suffix
    for name in ("spread", "hakusho_direct_vs_cot", "hakusho_image_type_direct", "hakusho_flag_direct",
                 "astrochart_domaincqa_bars_direct", "astrochart_domaincqa_box_cot"):
        png = out / "plots" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert b"<svg" in (out / "plots" / f"{name}.svg").read_bytes()[:500], name
    assert json.loads((out / "report.json").read_text())["tables"] == report["doc"]["tables"]


def test_main_table_matches_summary_json(runsets, report):
    entries = _summary_entries(runsets)
    rows = _csv(report["out"] / "tables" / "main.csv")
    labels = report["doc"]["overview"]["model_labels"]
    by_label = {v: k for k, v in labels.items()}
    assert len(rows) == 2 * 2 * 2  # 2 models × 2 benchmarks × 2 prompts
    for r in rows:
        e = entries[(by_label[r["row"]], r["column_group"], r["column"].lower())]
        assert float(r["mean_pct"]) == pytest.approx(100 * e["mean"], abs=1e-3)
        assert float(r["std_pct"]) == pytest.approx(100 * e["std"], abs=1e-3)
        assert int(r["n_scored"]) == e["n_scored"] and int(r["n_errors"]) == e["n_errors"]
        assert int(r["n_missing"]) == e["n_missing"]
        assert float(r["ci_low_pct"]) <= float(r["mean_pct"]) + 5 and float(r["ci_high_pct"]) >= float(r["ci_low_pct"])
        assert r["row_group"] == ("Open-weight" if by_label[r["row"]] == runsets["model_a"] else "Proprietary")
    md = (report["out"] / "tables" / "main.md").read_text()
    e = entries[(runsets["model_a"], "hakusho", "direct")]
    assert f"{100 * e['mean']:.1f} ± {100 * e['std']:.1f}" in md or f"{100 * e['mean']:.1f} ± 0.0" in md
    assert "*Open-weight*" in md and "*Proprietary*" in md and "n (s/u/e/m, coverage)" in md


def test_model_b_errors_are_counted_not_wrong(runsets, report):
    entries = _summary_entries(runsets)
    errs = sum(entries[(runsets["model_b"], b, p)]["n_errors"] for b in ("hakusho", "astrochart")
               for p in ("direct", "cot"))
    assert errs > 0, "the fault-injecting server should have produced errors"
    kinds = {p["kind"] for p in report["doc"]["problems"]}
    assert "errors" in kinds
    assert "conflict" not in kinds


def test_category_tables_match_summary_by_category(runsets, report):
    entries = _summary_entries(runsets)
    rows = _csv(report["out"] / "tables" / "hakusho_image_type_direct.csv")
    labels = {v: k for k, v in report["doc"]["overview"]["model_labels"].items()}
    checked = 0
    for r in rows:
        if r["column"] == "All":
            continue
        cat = r["column"].split(" (n=")[0]
        e = entries[(labels[r["row"]], "hakusho", "direct")]["by_category"]["image_type"][cat]
        assert float(r["mean_pct"]) == pytest.approx(100 * e["mean"], abs=1e-3)
        assert int(r["n_scored"]) == e["n"]
        checked += 1
    assert checked == 2 * 3
    astro = _csv(report["out"] / "tables" / "astrochart_domaincqa_cot.csv")
    assert [r["column"] for r in astro[:14]] == ["All", "Color", "Style", "Text", "Layout", "All", "Point", "Interval",
                                                  "Calculation", "Inference", "Summary", "KB-Inference", "KB-Summary",
                                                  "Overall"]
    for r in astro:
        e = entries[(labels[r["row"]], "astrochart", "cot")]
        if r["column"] in ("Summary", "KB-Summary"):  # open answers: no LLM judge → unscored, never a 0
            assert r["mean_pct"] == "" and int(r["n_unscored"]) > 0
        elif r["column_group"] == "Visual" and r["column"] != "All":
            assert float(r["mean_pct"]) == pytest.approx(
                100 * e["by_category"]["aspect"][r["column"]]["mean"], abs=1e-3)
        elif r["column"] == "Overall":
            assert float(r["mean_pct"]) == pytest.approx(100 * e["mean"], abs=1e-3)


def test_metrics_table_has_rouge_and_bleu(report):
    md = (report["out"] / "tables" / "astrochart_metrics.md").read_text()
    assert "ROUGE-L" in md and "BLEU-4" in md and "Accuracy" in md
    tex = (report["out"] / "tables" / "astrochart_metrics.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex


def test_markers_gap_and_omitted_categories(runsets, report):
    doc = report["doc"]
    (gap_direct,) = [g for g in doc["gaps"] if g["benchmark"] == "hakusho" and g["prompt"] == "direct"]
    cells = {(c["model"], c["benchmark"], c["prompt"]): c for c in doc["cells"]}
    a = cells[(runsets["model_a"], "hakusho", "direct")]["mean"]
    b = cells[(runsets["model_b"], "hakusho", "direct")]["mean"]
    assert gap_direct["best_gap"] == pytest.approx(b - a)
    assert gap_direct["test"]["test"] in ("mcnemar_exact", "paired_bootstrap")
    fig7 = (report["out"] / "tables" / "hakusho_image_type_direct.md").read_text()
    assert "Pie (6)" in fig7  # named as omitted from the plots (< 10 items)
    md = (report["out"] / "tables" / "main.md").read_text()
    assert "† p < 0.05 vs the best model" in md


def test_conflicting_duplicate_is_reported_and_strict_refuses(runsets, tmp_path):
    d1 = runsets["dirs"][0]
    d3 = tmp_path / "set3"
    shutil.copytree(d1, d3)
    lines = (d3 / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    rec = json.loads(next(ln for ln in lines if json.loads(ln)["status"] == "ok"))
    rec["response"] = rec["answer"] = "something else"
    with (d3 / "predictions.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    doc = run_cli_json("report", str(d1), str(d3), "--out", str(tmp_path / "r"), "--no-plots", "--bootstrap", "200")
    # Every other record of set 3 duplicates set 1 exactly and merges into one: counts equal set 1's alone.
    alone = run_cli_json("report", str(d1), "--out", str(tmp_path / "r1"), "--no-plots", "--bootstrap", "200")
    strip = [{k: v for k, v in c.items() if k in ("n_scored", "n_errors", "n_missing", "mean")} for c in doc["cells"]]
    assert strip == [{k: v for k, v in c.items() if k in ("n_scored", "n_errors", "n_missing", "mean")}
                     for c in alone["cells"]]
    conflicts = [p for p in doc["problems"] if p["kind"] == "conflict"]
    assert len(conflicts) == 1 and rec["sample_id"] in conflicts[0]["message"]
    proc = run_cli("report", str(d1), str(d3), "--out", str(tmp_path / "r2"), "--strict", "--no-plots", check=False)
    assert proc.returncode == 1 and "conflicting duplicate" in proc.stderr


def test_bad_inputs_fail_clearly(runsets, tmp_path):
    proc = run_cli("report", str(tmp_path), "--out", str(tmp_path / "r"), check=False)
    assert proc.returncode == 1 and "not a zuhyo run set" in proc.stderr
    proc = run_cli("report", str(runsets["dirs"][0]), "--out", str(tmp_path / "r"), "--tag", "nobody=open",
                   check=False)
    assert proc.returncode == 1 and "not in the run sets" in proc.stderr
    proc = run_cli("report", str(runsets["dirs"][0]), "--out", str(tmp_path / "r"), "--judge", "llm:x", check=False)
    assert proc.returncode == 1 and "no judgments by 'llm:x'" in proc.stderr
