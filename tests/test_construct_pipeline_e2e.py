"""The whole construction pipeline, end to end, through the real CLI and real local model servers (issue 11's
"Done when"): collect → filter → classify → complexity → sample → abstracts → draft → audit → (acceptance) →
export → ``zuhyo eval --bench local --path DIR`` on the export.

Two workspaces: a self-contained one built from generated LaTeX papers with matplotlib charts (always runs), and
one from the real sources in ``../shared/data`` (arXiv LaTeX papers and a white-paper PDF; skipped when absent).
Every model is a scripted :class:`zuhyo.testing.fake_openai.FakeOpenAIServer`; the people of the annotation app are
stood in for by the app's own workflow functions (``tests/gates_support.py``): experts rate drafts Valid, an author
adopts a hakusho draft and an independent annotator's blind answer matches it, so the export's gates are real.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_DATA, run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("pylatexenc", reason="the [build] extra is needed")

from test_construct_abstracts import vote  # noqa: E402
from test_construct_complexity import ccv_json  # noqa: E402
from test_construct_draft import K as DRAFT_KEYS  # noqa: E402
from test_construct_draft import qa  # noqa: E402

#: Four distinct CCVs; the pool holds each twice, so a sample of 4 can match the pool's distribution exactly.
CCVS = ["0000000000", "1100000000", "0011010000", "1111111100"]
TYPES = ["Line", "Bar", "Scatter", "Line"]

PAPER = r"""\documentclass{article}
\usepackage{graphicx}
\title{Paper %(name)s on galaxy growth}
\begin{document}
\maketitle
\begin{abstract}
ABSTRACT-%(name)s We study how galaxies grow across cosmic time.
\end{abstract}
\section{Results}
%(cites)s

%(figures)s
\section{Conclusions}
CONCLUSION-%(name)s Galaxies grow fast at high redshift.
\end{document}
"""


def _chart(path: Path, seed: int, size: tuple[int, int] = (480, 360)) -> None:
    """A real matplotlib chart (bars, lines or points), distinct per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=(size[0] / 100, size[1] / 100), dpi=100)
    x = np.arange(3 + seed % 5)
    kind = seed % 3
    if kind == 0:
        ax.bar(x, rng.uniform(1, 10, len(x)), color=["#d62728", "#1f77b4", "#2ca02c"][seed % 3])
    elif kind == 1:
        for k in range(1 + seed % 3):
            ax.plot(x, rng.uniform(0, 5, len(x)).cumsum(), marker="os^"[k], label=f"s{k}")
        ax.legend()
    else:
        ax.scatter(rng.normal(size=40), rng.normal(size=40), c=rng.uniform(size=40), cmap="viridis")
    ax.set_title(f"chart {seed}")
    fig.savefig(path)
    plt.close(fig)


def make_paper(root: Path, name: str, seeds: list[int], small: bool = False) -> Path:
    """A LaTeX project whose figures are charts ``seeds`` (captions ``cap-<name>-<i>``, each cited once); with
    ``small`` one more figure is a 60 x 40 thumbnail, which the filter drops as low resolution."""
    root.mkdir(parents=True)
    figures, cites = [], []
    sizes = [(480, 360)] * len(seeds) + ([(60, 40)] if small else [])
    for i, (seed, size) in enumerate(zip([*seeds, 99] if small else seeds, sizes, strict=True), 1):
        _chart(root / f"f{i}.png", seed, size)
        figures.append(f"\\begin{{figure}}\\includegraphics{{f{i}.png}}\\caption{{cap-{name}-{i}.}}"
                       f"\\label{{fig:f{i}}}\\end{{figure}}")
        cites.append(f"Figure~\\ref{{fig:f{i}}} shows cite-{name}-{i}.")
    (root / "main.tex").write_text(PAPER % {"name": name, "cites": "\n\n".join(cites),
                                            "figures": "\n".join(figures)}, encoding="utf-8")
    return root


def query(ws: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(ws / "zuhyo.db")
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


#: Astro drafting replies, keyed by the phrase only that kind's prompt has (DRAFT_KEYS, from test_construct_draft).
DRAFTS = {
    "Color": ("What colour are the plotted bars?", "red"),
    "Style": ("Which marker marks the first series?", "circles"),
    "Text": ("What is written in the title above the plot?", "chart 1"),
    "Layout": ("How many panels does the figure have?", "1"),
    "Point": ("What is the value of the highest bar?", "8.5"),
    "Interval": ("Over which range of x do the data extend?", "0 to 4"),
    "Calculation": ("By how much does the largest value exceed the smallest?", "6"),
    "Inference": ("How does the trend develop along x?", "It rises steadily."),
    "Summary": ("Summarise all visual elements of the chart.", "A single-panel chart with a title."),
    "KB-Inference": ("Why would galaxies grow faster at high redshift?", "Gas accretion was higher."),
    "KB-Summary": ("What is the main astrophysical result this chart supports?", "Galaxies grow fast early."),
}


def draft_answers() -> dict[str, str]:
    out = {}
    for kind, (question, answer) in DRAFTS.items():
        extra: dict[str, Any] = {"key_points": [answer]}
        if kind == "Point":
            extra = {"axis": {"min": 0, "max": 10, "scale": "linear"}}
        elif kind == "Interval":
            extra = {"axis": {"min": 0, "max": 5, "scale": "linear"}}
        elif kind == "Calculation":
            extra = {}
        out[DRAFT_KEYS[kind]] = qa(question, answer, **extra)
    return out


def accept_unflagged(ws: Path) -> list[int]:
    """Accept every draft the audit left unflagged through the annotation workflow's real checks (two experts'
    Valid for DomainCQA drafts; an author and a matching blind answer for hakusho ones)."""
    from gates_support import pass_gates
    from sqlalchemy import select

    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.qa_tables import QAFlag, QAItemRow

    with Workspace.open(ws) as w:
        with w.db.read() as s:
            flagged = set(s.scalars(select(QAFlag.qa_item_id)))
            rows = list(s.scalars(select(QAItemRow.id).where(QAItemRow.status == "draft").order_by(QAItemRow.id)))
        accepted = [row for row in rows if row not in flagged]
        pass_gates(w, accepted)
    return accepted


def export_and_evaluate(ws: Path, tmp_path: Path, fake_server, accepted: list[int], answers: dict[str, str],
                        *extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Export the accepted items, load them back, evaluate them with `zuhyo eval --bench local --path DIR`."""
    out = tmp_path / "published"
    doc = run_cli_json("export", str(ws), "--out", str(out), "--license", "cc-by-4.0", "--language", "en", *extra)
    assert doc["items"] == len(accepted) and doc["by_status"] == {"accepted": len(accepted)}
    assert (out / "README.md").is_file() and doc["shards"] and doc["skipped"] == 0
    from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark

    loaded = load_benchmark("local", BenchmarkSource(path=out), strict=True)
    assert sorted(int(s.id.removeprefix("qa-")) for s in loaded.samples) == accepted
    assert all(s.image is not None and s.image.data for s in loaded.samples)
    server = fake_server(answers=answers)
    summary = run_cli_json("eval", "--bench", "local", "--path", str(out), "--model",
                           f"openai:reader@{server.base_url}", "--out", str(tmp_path / "runs"), "--prompt", "direct",
                           "--runs", "1", "--quiet", "--retries", "0")
    assert server.state.requests == len(accepted)
    return doc, summary


def test_pipeline_on_generated_papers_from_collect_to_eval_of_the_export(tmp_path: Path, fake_server):
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    papers = {"P1": [1, 2, 3], "P2": [4, 5, 6], "P3": [7, 8]}
    for name, seeds in papers.items():
        src = make_paper(tmp_path / name, name, seeds, small=name == "P3")
        out = run_cli_json("collect", "latex", str(ws), str(src), "--paper-id", name)
        assert out["errors"] == 0 and out["figures"] == len(seeds) + (name == "P3")
    # filter: the 60 x 40 thumbnail goes (low resolution), the 8 charts stay
    filt = run_cli_json("filter", str(ws))
    kept = [r[0] for r in query(ws, "SELECT id FROM figures ORDER BY id")]
    dropped = {r[0] for r in query(ws, "SELECT figure_id FROM decisions WHERE stage = 'filter' AND decision = 'drop'")}
    assert len(kept) == 9 and len(dropped) == 1, filt
    charts = [f for f in kept if f not in dropped]
    captions = {fid: cap for fid, cap in query(ws, "SELECT id, caption FROM figures")}

    # classify and complexity: one scripted model each, keyed by the caption in the prompt
    types = fake_server(answers={captions[f].rstrip("."): json.dumps({"image_type": TYPES[i % 4]})
                                 for i, f in enumerate(charts)})
    out = run_cli_json("classify", str(ws), "--model", f"openai:typer@{types.base_url}")
    assert (out["run"]["labelled"], out["run"]["errors"]) == (8, 0)
    ccv = fake_server(answers={captions[f].rstrip("."): ccv_json(CCVS[i % 4]) for i, f in enumerate(charts)})
    out = run_cli_json("complexity", str(ws), "--model", f"openai:ccv@{ccv.base_url}")
    assert (out["run"]["labelled"], out["run"]["errors"]) == (8, 0)

    # Gibbs sampling (DomainCQA Algorithm 1): 4 of 8; the report shows the sample matching the pool
    sample = run_cli_json("sample", str(ws), "--n", "4", "--seed", "3")
    assert (sample["n"], sample["pool"], sample["recorded"]) == (4, 8, 4)
    assert sample["tvd_joint"] == pytest.approx(0.0) and sample["tvd_score"] == pytest.approx(0.0)
    assert sample["max_attr_diff"] == pytest.approx(0.0) and sample["random_tvd_joint"] >= sample["tvd_joint"]
    human = run_cli("sample", str(ws), "--n", "4", "--seed", "3").stdout  # the result: stdout
    assert "4 of 8 charts chosen; joint CCV TVD 0.000" in human and "nothing recorded" in human

    # chart abstracts (Algorithm 2): two models agree on each paper's second chart
    n_charts = {"P1": 3, "P2": 3, "P3": 2}
    voters = [fake_server(answers={f"ABSTRACT-{p}": vote("C2", n) for p, n in n_charts.items()}) for _ in range(2)]
    out = run_cli_json("abstracts", str(ws), *[a for i, v in enumerate(voters)
                                               for a in ("--model", f"openai:v{i}@{v.base_url}")])
    assert (out["majority"], out["tie"], out["errors"]) == (3, 0, 0)

    # drafting (DomainCQA Table 1): FQA for the sampled charts that are not chart abstracts (the two sets are
    # disjoint, DomainCQA §4.1), AQA for the 3 chart abstracts
    drafter = fake_server(answers=draft_answers())
    out = run_cli_json("draft", str(ws), "--model", f"openai:drafter@{drafter.base_url}", "--style", "astro")
    abstracts = {[f for f in charts if captions[f].startswith(f"cap-{p}-")][1] for p in n_charts}
    fqa_charts = set(sample["figure_ids"]) - abstracts
    assert (out["figures"], out["abstracts"], out["errors"]) == (len(abstracts | fqa_charts), 3, 0)
    assert out["abstracts_left_out"] == 4 - len(fqa_charts)
    assert out["drafted"] == len(fqa_charts) * 9 + 3 * 2 and sum(out["rejected"].values()) == 0
    drafted = out["drafted"]

    # audit: two models answer with the image as drafted; the Point question is answerable blind (text_only)
    blind_q = DRAFTS["Point"][0]
    answers = {q: a for q, a in DRAFTS.values()}
    blind = {q: (a if q == blind_q else "I cannot tell without the chart.") for q, a in answers.items()}
    auditor = fake_server(answers=answers, blind_answers=blind)
    out = run_cli_json("audit", str(ws), "--model", f"openai:a1@{auditor.base_url}",
                       "--model", f"openai:a2@{auditor.base_url}")
    assert out["items"] == drafted and out["errors"] == 0
    assert out["flags"]["text_only"] == len(fqa_charts)  # the Point item of each FQA chart

    accepted = accept_unflagged(ws)
    assert len(accepted) == drafted - len(fqa_charts)
    doc, summary = export_and_evaluate(ws, tmp_path, fake_server, accepted, answers)
    assert doc["images"] == len({f for (f,) in query(ws, "SELECT DISTINCT figure_id FROM qa_items WHERE status = "
                                                         "'accepted'")})
    assert summary["inference"]["ok"] == len(accepted) and summary["inference"].get("errors", 0) == 0
    (entry,) = summary["entries"]
    assert entry["benchmark"] == "local" and entry["n_errors"] == 0 and entry["n_scored"] > 0, entry
    assert entry["mean"] == pytest.approx(1.0), entry  # the reader answers every scored item as drafted
    card = (tmp_path / "published" / "README.md").read_text(encoding="utf-8")
    for row in ("| collected | `zuhyo collect` | 9 |", "| filtered (kept) | `zuhyo filter` | 8 |",
                "| classified (image type) | `zuhyo classify` | 8 |", "| complexity (CCV) | `zuhyo complexity` | 8 |",
                "| sampled | `zuhyo sample` | 4 |", "| chart abstracts | `zuhyo abstracts` | 3 |",
                f"| drafted QA | `zuhyo draft` | {drafted} |", f"| audited QA | `zuhyo audit` | {drafted} |",
                f"| accepted QA | `zuhyo serve` | {len(accepted)} |",
                f"| exported | `zuhyo export` | {len(accepted)} |"):
        assert row in card, row
    assert "### CCV attribute proportions (DomainCQA Table 4)" in card and "plots/ccv_attributes.png" in card


def test_pipeline_on_real_sources(tmp_path: Path, fake_server):
    """arXiv LaTeX papers (celerite, the AASTeX sample) and a MEXT white-paper PDF chapter, through every stage."""
    data = SHARED_DATA
    papers = {"celerite": data / "astro_latex" / "dfm_celerite", "aastex63": data / "astro_latex" / "aastex_sample63"}
    pdf = data / "mext_whitepaper_pdf" / "mext_r06_kagaku_gijutsu_innovation_hakusho_ch3.pdf"
    if not all(p.exists() for p in [*papers.values(), pdf]):
        pytest.skip(f"real sources not found under {data} (an optional extra layer of tests)")
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    for pid, src in papers.items():
        assert run_cli_json("collect", "latex", str(ws), str(src), "--paper-id", pid)["figures"] > 0
    assert run_cli_json("collect", "pdf", str(ws), str(pdf))["figures"] > 0
    run_cli_json("filter", str(ws))
    dropped = {r[0] for r in query(ws, "SELECT figure_id FROM decisions WHERE stage = 'filter' AND decision = 'drop'")}
    kept = [r[0] for r in query(ws, "SELECT id FROM figures ORDER BY id") if r[0] not in dropped]
    assert len(kept) >= 8

    # one model per stage; successive replies cycle through types and four CCVs (each CCV on a quarter of the pool)
    types = fake_server(answers={"visual-format categories": [json.dumps({"image_type": TYPES[i % 4]})
                                                               for i in range(len(kept))]})
    assert run_cli_json("classify", str(ws), "--model", f"openai:t@{types.base_url}", "--concurrency", "1"
                        )["run"]["labelled"] == len(kept)
    ccv = fake_server(answers={"Chart Complexity Vector": [ccv_json(CCVS[i % 4]) for i in range(len(kept))]})
    assert run_cli_json("complexity", str(ws), "--model", f"openai:c@{ccv.base_url}", "--concurrency", "1"
                        )["run"]["labelled"] == len(kept)
    n = len(kept) // 2
    sample = run_cli_json("sample", str(ws), "--n", str(n), "--seed", "0")
    assert (sample["n"], sample["pool"]) == (n, len(kept))
    # the sampling report: the sample's CCV distribution matches the pool's, better than a uniform random sample
    assert sample["tvd_joint"] <= sample["random_tvd_joint"] and sample["tvd_joint"] <= 0.15, sample
    assert sample["max_attr_diff"] <= 0.15 and sample["tvd_score"] <= 0.15, sample

    # chart abstracts: both models pick each paper's first kept chart
    ids = ",".join(map(str, kept))
    docs = query(ws, "SELECT d.id, d.title, COUNT(f.id) FROM documents d JOIN figures f ON f.document_id = d.id "
                     f"JOIN sources s ON s.id = d.source_id WHERE s.kind = 'latex' AND f.id IN ({ids}) GROUP BY d.id")
    replies = {f"Title: {title.strip()}": vote("C1", count) for _, title, count in docs if count >= 2}
    voters = [fake_server(answers=replies) for _ in range(2)]
    out = run_cli_json("abstracts", str(ws), *[a for i, v in enumerate(voters)
                                               for a in ("--model", f"openai:v{i}@{v.base_url}")])
    assert out["majority"] == len(replies) and out["errors"] == 0, out

    drafter = fake_server(answers=draft_answers())
    out = run_cli_json("draft", str(ws), "--model", f"openai:d@{drafter.base_url}", "--style", "astro")
    assert out["errors"] == 0 and out["drafted"] > 0, out
    answers = {q: a for q, a in DRAFTS.values()}
    auditor = fake_server(answers=answers, blind_answers={q: "I cannot tell without the chart." for q in answers})
    audit = run_cli_json("audit", str(ws), "--model", f"openai:a1@{auditor.base_url}",
                         "--model", f"openai:a2@{auditor.base_url}")
    assert audit["errors"] == 0 and audit["flags"]["text_only"] == 0

    accepted = accept_unflagged(ws)
    doc, summary = export_and_evaluate(ws, tmp_path, fake_server, accepted, answers, "--source-license", "1=MIT")
    assert summary["entries"][0]["n_errors"] == 0
    card = (tmp_path / "published" / "README.md").read_text(encoding="utf-8")
    # the source is named by the paper's \\title (not its id, "celerite"), with the licence given by source id
    celerite = [ln for ln in card.splitlines() if ln.startswith("| Fast and scalable Gaussian process modeling")]
    assert len(celerite) == 1 and "| MIT |" in celerite[0], celerite
    assert "| celerite |" not in card and "| sampled | `zuhyo sample` | " + str(n) + " |" in card
    assert f"| exported | `zuhyo export` | {len(accepted)} |" in card
