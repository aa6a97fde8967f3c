"""`zuhyo agreement`: Krippendorff's α of any reliability matrix (a CSV: rows coders, columns units)."""

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
    json_out: JsonOpt = False,
) -> None:
    """Krippendorff's alpha of a reliability matrix (DomainCQA §4.3 reports it for its expert ratings)."""
    from zuhyo.agreement import ALPHA_LEVELS, ReliabilityError, krippendorff_alpha, read_reliability_csv

    if level not in ALPHA_LEVELS:
        fail(f"--level must be one of {', '.join(ALPHA_LEVELS)} (got {level!r})")
    try:
        matrix, coders, units = read_reliability_csv(input_csv, level, header=header, coder_names=coder_names)
    except ReliabilityError as e:
        fail(str(e))
    if len(coders) < 2:
        fail(f"{input_csv}: {len(coders)} coder row(s); alpha needs at least two coders")
    alpha = krippendorff_alpha(matrix, level)
    if alpha is None:
        fail(f"{input_csv}: alpha is undefined: no unit has two ratings, or all ratings are the same value")
    if json_out:
        emit_json({"alpha": alpha, "level": level, "coders": len(coders), "units": len(units)})
        return
    results(json_out).print(f"Krippendorff's alpha ({level}): {alpha:.4f} — {len(coders)} coders, "
                            f"{len(units)} units", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("agreement")(agreement_cmd)
