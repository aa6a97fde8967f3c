"""Agreement of a stage's labels with a labelled sample: accuracy and Cohen's kappa.

HakushoBench §4 checks its model image-type labels by manual verification of 100 random examples; these are the
figures to report for such a check. Cohen's kappa (Cohen 1960): κ = (p_o − p_e) / (1 − p_e), with p_o the observed
agreement and p_e the agreement expected by chance from the two labellers' marginal distributions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any


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
