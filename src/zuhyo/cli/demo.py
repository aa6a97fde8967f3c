"""`zuhyo demo`: offline end-to-end run on the bundled benchmarks (the README's main command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, emit_json, results


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo_cmd(
        out: Annotated[Path, typer.Option("--out", help="Output folder (runs/ and report/).")] = Path("zuhyo-demo"),
        model: Annotated[str, typer.Option("--model", help="Model spec; the default needs no key or download.")
                         ] = "ocr",
        runs: Annotated[int, typer.Option("--runs", min=1, help="Repetitions (papers: 3).")] = 3,
        limit: Annotated[int | None, typer.Option("--limit", min=1, help="First N samples per benchmark.")] = None,
        no_report: Annotated[bool, typer.Option("--no-report", help="Skip the report.")] = False,
        json_out: JsonOpt = False,
        quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
    ) -> None:
        """Evaluate the OCR baseline on sample-ja and sample-astro, judge, and write an HTML report — offline."""
        from zuhyo.cli.evaluation import print_summary_table, progress_reporter
        from zuhyo.demo import run_demo

        result = run_demo(out, model=model, runs=runs, limit=limit, report=not no_report,
                          reporter=progress_reporter(enabled=not quiet))
        print_summary_table({"entries": result["entries"]}, json_out)
        if "report_index" in result:
            results(json_out).print(f"[bold green]report:[/] {result['report_index']}")
        results(json_out).print(f"run sets: {', '.join(result['runs'])}")
        if json_out:
            emit_json(result)
