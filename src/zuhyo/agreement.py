"""Agreement of a stage's labels with a labelled sample: accuracy and Cohen's kappa; Krippendorff's α.

HakushoBench §4 checks its model image-type labels by manual verification of 100 random examples; these are the
figures to report for such a check. Cohen's kappa (Cohen 1960): κ = (p_o − p_e) / (1 − p_e), with p_o the observed
agreement and p_e the agreement expected by chance from the two labellers' marginal distributions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

#: Krippendorff's levels of measurement (the ``krippendorff`` package's names).
ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two label sequences of equal length; None when undefined (no items, or both labellers
    used one and the same label throughout, so p_e = 1)."""
    if len(a) != len(b):
        raise ValueError("both labellers must label the same items")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


def agreement(pairs: Sequence[tuple[Hashable, Hashable]]) -> dict[str, Any]:
    """``{"n", "accuracy", "kappa"}`` of (gold, predicted) pairs (accuracy and kappa None when n is 0)."""
    gold = [g for g, _ in pairs]
    pred = [p for _, p in pairs]
    n = len(pairs)
    return {"n": n, "accuracy": (sum(g == p for g, p in pairs) / n) if n else None, "kappa": cohen_kappa(gold, pred)}


class ReliabilityError(ValueError):
    """A reliability matrix (CSV) that cannot be used; the message names the file, row and column."""


def krippendorff_alpha(matrix: Sequence[Sequence[float | None]], level: str) -> float | None:
    """Krippendorff's α (Krippendorff 2011; DomainCQA §4.3) of a coders × units matrix, None marking a missing
    rating; None when α is undefined (fewer than two coders, no unit rated twice, or one value throughout)."""
    import math

    import krippendorff
    import numpy as np

    if level not in ALPHA_LEVELS:
        raise ReliabilityError(f"unknown level {level!r} (one of {', '.join(ALPHA_LEVELS)})")
    data = np.array([[np.nan if v is None else float(v) for v in row] for row in matrix], dtype=float)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] == 0:
        return None
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    if not pairable.any() or len(values) < 2:
        return None
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))  # type: ignore[arg-type]
    return None if math.isnan(alpha) else alpha


def read_reliability_csv(path: Path, level: str, *, header: bool = False,
                         coder_names: bool = False) -> tuple[list[list[float | None]], list[str], list[str]]:
    """A reliability matrix from a CSV: one row per coder, one column per unit, a blank cell = missing.

    With ``header`` the first row names the units; with ``coder_names`` the first column names the coders.
    Values are numbers; at the nominal level any text is allowed too (each distinct text is one category).
    Returns ``(matrix, coders, units)``; raises :class:`ReliabilityError` naming the row and column of a problem.
    """
    import csv

    if level not in ALPHA_LEVELS:
        raise ReliabilityError(f"unknown level {level!r} (one of {', '.join(ALPHA_LEVELS)})")
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            rows = [r for r in csv.reader(f) if any(c.strip() for c in r)]
    except OSError as e:
        raise ReliabilityError(f"{path}: cannot read ({e.strerror or e})") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise ReliabilityError(f"{path}: not a UTF-8 CSV file ({e})") from None
    first_line = 1
    if header:
        if not rows:
            raise ReliabilityError(f"{path}: empty file")
        units = [c.strip() for c in rows[0][1 if coder_names else 0:]]
        rows, first_line = rows[1:], 2
    if not rows:
        raise ReliabilityError(f"{path}: no coder rows")
    width = len(rows[0]) - (1 if coder_names else 0)
    if not header:
        units = [f"unit{i + 1}" for i in range(width)]
    if width < 1 or len(units) != width:
        raise ReliabilityError(f"{path}: the header names {len(units)} units but row {first_line} has {width}")
    codes: dict[str, float] = {}
    matrix: list[list[float | None]] = []
    coders: list[str] = []
    for n, row in enumerate(rows, start=first_line):
        cells = row[1:] if coder_names else row
        if len(cells) != width:
            raise ReliabilityError(f"{path}: row {n} has {len(cells)} units, expected {width}")
        coders.append(row[0].strip() if coder_names else f"coder{len(coders) + 1}")
        line: list[float | None] = []
        for col, cell in enumerate(cells, start=2 if coder_names else 1):
            text = cell.strip()
            if not text:
                line.append(None)
                continue
            try:
                line.append(float(text))
            except ValueError:
                if level != "nominal":
                    raise ReliabilityError(f"{path}: row {n}, column {col}: {text!r} is not a number "
                                           f"(the {level} level needs numbers)") from None
                line.append(codes.setdefault(text, float(len(codes) + 1_000_000)))
        matrix.append(line)
    return matrix, coders, units
