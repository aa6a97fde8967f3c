"""`zuhyo report`: paper-grade tables, statistics, plots and an HTML report from run sets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, results


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        dirs: Annotated[list[Path], typer.Argument(help="Run-set directories written by `zuhyo eval` (merged).")],
        out: Annotated[Path, typer.Option("--out", help="Report folder (index.html, tables/, plots/).")],
        tag: Annotated[list[str] | None, typer.Option("--tag", help="MODEL=open|proprietary (repeatable): groups "
                                                      "the table rows and gives the open/proprietary gap.")] = None,
        judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge whose verdicts to use where "
                                                        "several judged a benchmark: SPEC or BENCH=SPEC.")] = None,
        bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples (CIs, paired tests).")
                             ] = 10_000,
        seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
        min_items: Annotated[int, typer.Option("--min-category-items", min=1, help="Categories with fewer items "
                                               "are greyed out in the category plots (HakushoBench omits "
                                               "them: 50).")] = 50,
        font: Annotated[Path | None, typer.Option("--font", help="CJK font file for the plots (default: IPAex "
                                                  "Gothic).")] = None,
        max_failed: Annotated[int, typer.Option("--max-failed", min=0, help="Failed item-runs listed per model "
                                                "in index.html (0: all, paged; all are counted).")] = 0,
        strict: Annotated[bool, typer.Option("--strict", help="Refuse conflicting duplicate records across run "
                                             "sets (default: the first run set given wins, and it is reported).")
                          ] = False,
        no_plots: Annotated[bool, typer.Option("--no-plots", help="Skip the plots.")] = False,
        reference_scores: Annotated[list[str] | None, typer.Option(
            "--reference-scores", help="Published scores to show beside the measured ones, with the difference: a "
                                       "CSV (benchmark,model,prompt,category,score[,std,source]) or a bundled "
                                       "table: domaincqa-table2 | hakushobench-text (repeatable).")] = None,
        workspace: Annotated[Path | None, typer.Option(
            "--workspace", help="A workspace whose error analysis (`zuhyo errors`) to show: error types per "
                                "model.")] = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Tables (Markdown, CSV, LaTeX), bootstrap CIs and paired tests, plots and index.html from run sets."""
        from zuhyo.report.build import ReportOptions, build_report

        breakdown = None
        if workspace is not None:
            from zuhyo.annotate.errors_analysis import error_breakdown
            from zuhyo.construct.workspace import Workspace

            with Workspace.open(workspace) as ws:
                breakdown = error_breakdown(ws.db)
        doc = build_report(list(dirs), out, ReportOptions(
            tags=list(tag or []), judge=list(judge or []), n_resamples=bootstrap, seed=seed,
            min_category_items=min_items, font=font, max_failed_per_model=max_failed, strict=strict,
            plots=not no_plots, reference_scores=list(reference_scores or []),
            error_breakdown=breakdown))
        for p in doc["problems"]:
            console.print(f"[yellow]{p['kind']}:[/] {p['message']}", highlight=False)
        results(json_out).print(f"{len(doc['tables'])} tables, {len(doc['plots'])} plots; report: {doc['index']}",
                                highlight=False)
        if json_out:
            emit_json(doc)
