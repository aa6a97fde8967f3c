"""`zuhyo demo`: offline end-to-end runs on bundled material — evaluation (the README's main command) and, with
`zuhyo demo build`, the construction pipeline as a rehearsal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, emit_json, results

demo_app = typer.Typer(help="Offline end-to-end runs on bundled material: `zuhyo demo` evaluates the OCR baseline "
                            "and reports; `zuhyo demo build` rehearses the construction pipeline.",
                       invoke_without_command=True, no_args_is_help=False)


@demo_app.callback(invoke_without_command=True)
def demo_cmd(
    ctx: typer.Context,
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
    if ctx.invoked_subcommand is not None:
        return
    from zuhyo.cli.evaluation import print_summary_table, progress_reporter
    from zuhyo.demo import run_demo

    result = run_demo(out, model=model, runs=runs, limit=limit, report=not no_report,
                      reporter=progress_reporter(enabled=not quiet))
    print_summary_table({"entries": result["entries"]}, json_out)
    if "report_index" in result:
        results(json_out).print(f"[bold green]report:[/] {result['report_index']}")
    results(json_out).print(f"run sets: {', '.join(result['runs'])}")
    if model == "ocr":
        results(json_out).print("note: the OCR baseline is a floor, not a model: it reads the chart's text, so it "
                                "scores near 0 where answers need reading values off the plot (most of "
                                "sample-astro); the report's empty bars are such zeros, not missing data. Try "
                                "--model openai:MODEL@URL for a real model.", highlight=False, soft_wrap=True)
    if json_out:
        emit_json(result)


@demo_app.command("build")
def build_cmd(
    out: Annotated[Path, typer.Option("--out", help="A new folder for the rehearsal (sources/, ws/, export/, run/, "
                                                    "report/).")] = Path("zuhyo-demo-build"),
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip the evaluation's report.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Rehearse the construction pipeline offline: init, collect (LaTeX, PDF, folder), filter, classify,
    complexity, sample, abstracts, draft, audit, scripted review, export, eval --bench local, report.

    The model stages are answered by the `dry-run` backend (schema-valid placeholders, marked dry-run in the
    workspace); the export refuses them, then takes them with --allow-dry-run. Each stage prints one line and
    where to look; nothing goes to the network."""
    from zuhyo.cli.workspace import require_build_extra

    require_build_extra()
    from rich.markup import escape

    from zuhyo.demo_build import StageLine, run_build_demo

    shown = results(json_out)

    def on_stage(line: StageLine) -> None:
        look = f"  [dim]→ {escape(line.look)}[/]" if line.look else ""
        shown.print(f"[bold]{line.stage:<18}[/] {escape(line.summary)}{look}", highlight=False, soft_wrap=True)

    result = run_build_demo(out, report=not no_report, on_stage=on_stage)
    shown.print(f"[bold green]done in {result.seconds:.0f} s[/]: workspace {escape(result.workspace)}, export "
                f"{escape(result.export)} (placeholders, marked dry-run)"
                + (f", report {escape(result.report)}" if result.report else ""), highlight=False, soft_wrap=True)
    if json_out:
        emit_json(result.model_dump(mode="json"))


def register(app: typer.Typer) -> None:
    app.add_typer(demo_app, name="demo")
