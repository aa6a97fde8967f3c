"""Published scores beside measured ones (issue 13, item 5) and the CoT diagnostics table in the report: a run set
made by the real `zuhyo eval` against a local server, then `zuhyo report --reference-scores` in a subprocess."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import run_cli, run_cli_json

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.report.reference import load_reference_scores
from zuhyo.report.runsets import ReportError

MODEL_ID = "gpt-4o-2024-11-20"  # the gpt-4o preset's model id: its reference name "GPT-4o" matches


def test_bundled_tables_hold_the_papers_numbers():
    rows = load_reference_scores("domaincqa-table2")
    assert len(rows) == 21 * 14  # DomainCQA Table 2: 21 models × 13 categories + Overall
    overall = {r.model: r.score for r in rows if r.category == ""}
    assert overall["GPT-4o"] == pytest.approx(0.7531) and overall["Gemini-2.5-Pro-Preview"] == pytest.approx(0.7992)
    assert overall["TinyChart-3B"] == pytest.approx(0.1676)
    gpt = {r.category: r.score for r in rows if r.model == "GPT-4o"}
    assert gpt["aspect=Calculation"] == pytest.approx(0.4298) and gpt["category=KB-Summary"] == pytest.approx(0.6994)
    hakusho = {(r.benchmark, r.model): (r.prompt, r.score) for r in load_reference_scores("hakushobench-text")}
    assert hakusho[("hakusho", "Gemini 3 Pro")] == ("cot", pytest.approx(0.935))
    assert hakusho[("jgraphqa", "Qwen3-VL 8B")] == ("best", pytest.approx(0.888))


def test_bad_reference_files_are_refused(tmp_path):
    with pytest.raises(ReportError, match="no such file and no bundled table.*domaincqa-table2"):
        load_reference_scores(str(tmp_path / "nope.csv"))
    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,model,prompt,category,score\nsample-astro,GPT-4o,direct,,seventy\n", encoding="utf-8")
    with pytest.raises(ReportError, match="line 2: 'seventy' is not a number"):
        load_reference_scores(str(bad))


@pytest.fixture(scope="module")
def report(tmp_path_factory, request):
    from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

    root = tmp_path_factory.mktemp("reference")
    samples = load_benchmark("sample-astro").samples
    with FakeOpenAIServer(ServerState(answers={s.question: s.answers[0] for s in samples})) as server:
        run_cli("eval", "--bench", "sample-astro", "--model", f"openai:{MODEL_ID}@{server.base_url}", "--runs", "2",
                "--prompt", "both", "--out", str(root / "run"), "--quiet")
    published = root / "published.csv"
    published.write_text("benchmark,model,prompt,category,score,std,source\n"
                         "sample-astro,GPT-4o,direct,,75.31,1.2,test table\n"
                         "sample-astro,GPT-4o,best,category=Visual,84.29,,test table\n"
                         "sample-astro,Pixtral-large-124B,direct,,74.57,,test table\n", encoding="utf-8")
    doc = run_cli_json("report", str(root / "run"), "--out", str(root / "report"), "--no-plots", "--bootstrap", "200",
                       "--reference-scores", str(published))
    return {"root": root, "doc": doc, "out": root / "report"}


def test_published_scores_render_beside_measured_with_the_difference(report):
    doc = report["doc"]
    (ref,) = doc["reference_scores"]
    assert ref["n_unmatched"] == 1  # Pixtral was not run
    rows = {(m["prompt"], m["category"]): m for m in ref["matched"]}
    cells = {c["prompt"]: c for c in doc["cells"]}
    direct = rows[("direct", "")]
    assert direct["measured"] == cells["direct"]["mean"] and direct["model"].startswith(f"openai:{MODEL_ID}@")
    assert direct["difference_points"] == pytest.approx(100 * (cells["direct"]["mean"] - 0.7531))
    best = rows[("best", "category=Visual")]
    visual = {p: c["by_category"]["category"]["Visual"]["mean"] for p, c in cells.items()}
    assert best["measured"] == max(visual.values()) and best["measured_prompt"] in visual
    table = list(csv.DictReader((report["out"] / "tables" / "reference_scores.csv").open(encoding="utf-8")))
    assert table, "the comparison table has rows"
    md = (report["out"] / "tables" / "reference_scores.md").read_text(encoding="utf-8")
    assert "sample-astro · GPT-4o · direct" in md and "75.3 ± 1.2" in md
    assert f"{direct['difference_points']:+.1f}" in md
    assert "1 published scores have no measured counterpart" in md and "Pixtral-large-124B" in md
    html = (report["out"] / "index.html").read_text(encoding="utf-8")
    assert "Published vs measured scores" in html and f"{direct['difference_points']:+.1f}" in html


def test_report_shows_cot_diagnostics(report):
    doc = report["doc"]
    rows = {r["prompt"]: r for r in doc["diagnostics"]}
    assert set(rows) == {"direct", "cot"}
    n = len(load_benchmark("sample-astro").samples) * 2
    assert rows["cot"]["n_replies"] == rows["direct"]["n_replies"] == n
    # The server's CoT replies end with an answer line and never loop or hit the limit.
    assert (rows["cot"]["n_truncated"], rows["cot"]["n_no_final_answer"], rows["cot"]["n_looping"]) == (0, 0, 0)
    html = (report["out"] / "index.html").read_text(encoding="utf-8")
    assert "Reply diagnostics per model and prompt" in html and "Repetition loop" in html
    assert (report["out"] / "tables" / "cot_diagnostics.csv").is_file()
    summary = json.loads((report["root"] / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["diagnostics"] == doc["diagnostics"]
