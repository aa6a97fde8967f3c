"""`zuhyo agreement`: Krippendorff's α of any reliability matrix (a CSV: rows coders, columns units) with its
bootstrap 95 % confidence interval (Hayes & Krippendorff 2007)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, emit_json, fail, results


def agreement_cmd(
    input_csv: Annotated[Path, typer.Option("--input", help="CSV: one row per coder, one column per unit, a blank "
                                                            "cell = missing.")],
    level: Annotated[str, typer.Option("--level", help="Level of measurement: nominal, ordinal, interval or "
                                                       "ratio.")] = "nominal",
    header: Annotated[bool, typer.Option("--header", help="The first row names the units.")] = False,
    coder_names: Annotated[bool, typer.Option("--coder-names", help="The first column names the coders.")] = False,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples for the 95 % confidence "
                                                               "interval of alpha (Hayes & Krippendorff 2007); "
                                                               "0 = no interval.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the bootstrap (the same seed gives the same "
                                                     "interval).")] = 0,
    json_out: JsonOpt = False,
) -> None:
    """Krippendorff's alpha of a reliability matrix with its bootstrap 95 % CI (DomainCQA §4.3 reports alpha for
    its expert ratings)."""
    from zuhyo.agreement import ALPHA_LEVELS, ReliabilityError, alpha_summary, read_reliability_csv

    if level not in ALPHA_LEVELS:
        fail(f"--level must be one of {', '.join(ALPHA_LEVELS)} (got {level!r})")
    if bootstrap < 0:
        fail(f"--bootstrap must be 0 (no interval) or a number of resamples (got {bootstrap})")
    if seed < 0:
        fail(f"--seed must be 0 or more (got {seed})")
    try:
        matrix, coders, units = read_reliability_csv(input_csv, level, header=header, coder_names=coder_names)
    except ReliabilityError as e:
        fail(str(e))
    if len(coders) < 2:
        fail(f"{input_csv}: {len(coders)} coder row(s); alpha needs at least two coders")
    summary = alpha_summary(matrix, level, n_boot=bootstrap, seed=seed)
    alpha, ci = summary["alpha"], summary["ci95"]
    if alpha is None:
        fail(f"{input_csv}: alpha is undefined: no unit has two ratings, or all ratings are the same value")
    if json_out:
        emit_json({**summary, "bootstrap": bootstrap, "seed": seed})
        return
    interval = f" (95 % CI {ci[0]:.2f}–{ci[1]:.2f}, {bootstrap} resamples)" if ci is not None else ""
    results(json_out).print(f"Krippendorff's alpha ({level}): α = {alpha:.4f}{interval} — {len(coders)} coders, "
                            f"{len(units)} units", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("agreement")(agreement_cmd)
