"""`zuhyo errors`: error analysis (HakushoBench §6.3) — import a model's wrong answers from a run set into a
workspace for people to tag, and show the breakdown of the tags."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, fail, results

errors_app = typer.Typer(help="Error analysis of a model's wrong answers (HakushoBench §6.3): import, breakdown.",
                         no_args_is_help=True)
WsArg = Annotated[Path, typer.Argument(help="Workspace folder (made by `zuhyo init`).")]


@errors_app.command("import")
def import_cmd(
    ws: WsArg,
    runs: Annotated[Path, typer.Option("--runs", help="A run set written by `zuhyo eval --out`.")],
    model: Annotated[str, typer.Option("--model", help="The model: its spec as in the run set, or its name.")],
    n: Annotated[int, typer.Option("--n", help="How many wrong answers to draw at random.")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the draw.")] = 0,
    judge: Annotated[str | None, typer.Option("--judge", help="Whose verdicts count when the run set has several "
                                                              "judges.")] = None,
    error_type: Annotated[list[str] | None, typer.Option(
        "--error-type", help="Error types people choose from (repeatable; default perception, knowledge, "
                             "counting, reasoning, other).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Draw --n of a model's wrong answers from a run set into the workspace for tagging (re-running adds
    nothing twice)."""
    from zuhyo.annotate.errors_analysis import import_error_samples
    from zuhyo.annotate.workflow import DEFAULT_ERROR_TYPES, WorkflowError
    from zuhyo.cli.workspace import open_workspace
    from zuhyo.errors import ZuhyoError

    with open_workspace(ws) as w:
        try:
            out = import_error_samples(w.db, runs, model, n, seed, tuple(error_type or DEFAULT_ERROR_TYPES),
                                       images=w.images, judge=judge)
        except (WorkflowError, ZuhyoError) as e:
            fail(str(e))
    if json_out:
        emit_json(out)
        return
    results(json_out).print(f"{out['model']}: {out['wrong']} wrong answers, {out['sampled']} drawn; "
                            f"{out['imported']} imported, {out['existing']} already there", highlight=False)
    for key, why in out["image_errors"].items():
        console.print(f"[yellow]image of {key} not copied[/]: {why}", highlight=False)


@errors_app.command("breakdown")
def breakdown_cmd(ws: WsArg, json_out: JsonOpt = False) -> None:
    """Error types tagged so far, per run set and model."""
    from zuhyo.annotate.errors_analysis import error_breakdown
    from zuhyo.cli.workspace import open_workspace

    with open_workspace(ws) as w:
        out = error_breakdown(w.db)
    if json_out:
        emit_json(out or {"groups": []})
        return
    con = results(json_out)
    if out is None:
        con.print("no error samples: import some with `zuhyo errors import`", highlight=False)
        return
    for g in out["groups"]:
        types = ", ".join(f"{t} {k}" for t, k in g["types"].items()) or "none yet"
        con.print(f"{g['model']} ({g['run_set']}): {g['tagged']}/{g['samples']} tagged — {types}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(errors_app, name="errors")
