"""Statistics for reports: bootstrap confidence intervals and paired significance tests (pure functions).

- **Bootstrap CI** — percentile bootstrap over items (Efron & Tibshirani, *An Introduction to the Bootstrap*,
  1993, ch. 13): resample the per-item scores with replacement ``n_resamples`` times (seeded), take the mean of
  each resample, report the 2.5th and 97.5th percentiles. Each item's score is first averaged over runs, so the
  resampling unit is the item (runs of one item are not independent draws).
- **McNemar's exact test** for two binary-scored systems on the same items (McNemar, *Psychometrika* 12, 1947;
  exact conditional form: Fagerland, Lydersen & Laake, *BMC Med. Res. Methodol.* 13:91, 2013): with ``b`` items
  right only for A and ``c`` right only for B, the two-sided p-value is that of a binomial test of ``b`` successes
  in ``b + c`` trials with p = 0.5 (``scipy.stats.binomtest``).
- **Paired bootstrap test** for graded scores (Koehn, EMNLP 2004; Berg-Kirkpatrick, Burkett & Klein, EMNLP 2012):
  resample items, recompute the mean difference δ*; two-sided p = (1 + #{|δ* − δ̂| ≥ |δ̂|}) / (B + 1), i.e. the
  bootstrap distribution shifted to the null δ = 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
ALPHA = 0.05


@dataclass(frozen=True)
class ConfidenceInterval:
    """A percentile bootstrap CI of a mean."""

    mean: float
    low: float
    high: float
    n_items: int
    n_resamples: int
    seed: int
    level: float = 0.95


def bootstrap_ci(scores: Sequence[float], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 level: float = 0.95) -> ConfidenceInterval | None:
    """Percentile bootstrap CI of the mean of ``scores`` (one score per item); None for no items."""
    x = np.asarray(scores, dtype=float)
    if x.size == 0:
        return None
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    rng = np.random.default_rng(seed)
    means = _resample_means(x, rng, n_resamples)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return ConfidenceInterval(float(x.mean()), float(low), float(high), int(x.size), n_resamples, seed, level)


def _resample_means(x: np.ndarray, rng: np.random.Generator, n_resamples: int, chunk: int = 1000) -> np.ndarray:
    # Chunked so 10,000 resamples of a few thousand items stay within a few tens of MB.
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, x.size, size=(stop - start, x.size))
        out[start:stop] = x[idx].mean(axis=1)
    return out


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> tuple[float, int, int]:
    """Two-sided exact McNemar p-value for paired binary scores; returns (p, b_only_a, c_only_b)."""
    from scipy.stats import binomtest

    if len(a) != len(b):
        raise ValueError("paired scores need the same length")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x == 1 and y == 0)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if x == 0 and y == 1)
    if only_a + only_b == 0:
        return 1.0, 0, 0
    return float(binomtest(only_a, only_a + only_b, 0.5, alternative="two-sided").pvalue), only_a, only_b


def paired_bootstrap_p(a: Sequence[float], b: Sequence[float], *, n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED) -> float:
    """Two-sided paired bootstrap p-value for mean(a) − mean(b) = 0 (items paired by position)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        raise ValueError("no paired items")
    observed = float(d.mean())
    if observed == 0.0:
        return 1.0
    rng = np.random.default_rng(seed)
    deltas = _resample_means(d, rng, n_resamples)
    extreme = int(np.sum(np.abs(deltas - observed) >= abs(observed)))
    return (1 + extreme) / (n_resamples + 1)


def is_binary(scores: Sequence[float]) -> bool:
    """True when every score is exactly 0 or 1 (McNemar applies)."""
    return all(s in (0.0, 1.0) for s in scores)


@dataclass
class PairedComparison:
    """A's and B's item scores compared on the items both have."""

    a: str
    b: str
    n_common: int
    only_in_a: int
    """Items scored for A but not for B (left out of the comparison)."""
    only_in_b: int
    mean_a: float | None
    mean_b: float | None
    test: str
    """'mcnemar_exact', 'paired_bootstrap', or 'none' (no common items)."""
    p_value: float | None
    details: dict[str, float | int] = field(default_factory=dict)

    @property
    def diff(self) -> float | None:
        return None if self.mean_a is None or self.mean_b is None else self.mean_a - self.mean_b

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA

    @property
    def mismatched(self) -> bool:
        return bool(self.only_in_a or self.only_in_b)

    def to_json(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "n_common": self.n_common, "only_in_a": self.only_in_a,
                "only_in_b": self.only_in_b, "mean_a": self.mean_a, "mean_b": self.mean_b, "diff": self.diff,
                "test": self.test, "p_value": self.p_value, "significant": self.significant, **self.details}


def compare_paired(a_name: str, a: Mapping[str, float], b_name: str, b: Mapping[str, float], *,
                   n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> PairedComparison:
    """Compare per-item scores (item id → score averaged over runs) on the intersection of their items.

    Binary scores on both sides → McNemar's exact test; otherwise the paired bootstrap. Items present on one
    side only are counted in ``only_in_a`` / ``only_in_b`` and never enter either mean.
    """
    common = sorted(set(a) & set(b))
    xs = [a[k] for k in common]
    ys = [b[k] for k in common]
    cmp = PairedComparison(a_name, b_name, len(common), len(set(a) - set(b)), len(set(b) - set(a)),
                           float(np.mean(xs)) if xs else None, float(np.mean(ys)) if ys else None, "none", None)
    if not common:
        return cmp
    if is_binary(xs) and is_binary(ys):
        p, only_a, only_b = mcnemar_exact(xs, ys)
        cmp.test, cmp.p_value = "mcnemar_exact", p
        cmp.details = {"b_only_a_correct": only_a, "c_only_b_correct": only_b}
    else:
        cmp.test = "paired_bootstrap"
        cmp.p_value = paired_bootstrap_p(xs, ys, n_resamples=n_resamples, seed=seed)
        cmp.details = {"n_resamples": n_resamples, "seed": seed}
    if cmp.p_value is not None and math.isnan(cmp.p_value):
        cmp.p_value = None
    return cmp
