"""Agreement of a stage's labels with a labelled sample: accuracy and Cohen's kappa; Krippendorff's α with a
bootstrap confidence interval.

HakushoBench §4 checks its model image-type labels by manual verification of 100 random examples; these are the
figures to report for such a check. Cohen's kappa (Cohen 1960): κ = (p_o − p_e) / (1 − p_e), with p_o the observed
agreement and p_e the agreement expected by chance from the two labellers' marginal distributions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

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


def _reliability_array(matrix: Sequence[Sequence[float | None]]) -> np.ndarray:
    import numpy as np

    return np.array([[np.nan if v is None else float(v) for v in row] for row in matrix], dtype=float)


def _delta(level: str, values: np.ndarray, n: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The metric δ²_ck of the level between the pairable values of ranks ``c`` and ``k`` (broadcast index arrays
    into the sorted ``values``; ``n`` the marginal counts n_g, used by the ordinal metric)."""
    import numpy as np

    a, b = values[c], values[k]
    if level == "nominal":
        return (a != b).astype(float)
    if level == "interval":
        return (a - b) ** 2
    if level == "ratio":
        total = a + b
        return np.divide(a - b, total, out=np.zeros(np.broadcast(a, b).shape), where=total != 0) ** 2
    # ordinal (Krippendorff 2011): δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² for ranks c ≤ k, which is (r_k − r_c)²
    # with r_g = Σ_{h≤g} n_h − n_g/2 the mid-rank of value g
    rank = np.cumsum(n) - n / 2
    return (rank[c] - rank[k]) ** 2


def _coincidences(data: np.ndarray, level: str) -> tuple[float, float, np.ndarray, np.ndarray, int] | None:
    """``(alpha, d_e, weights, deltas, pairs)`` of a coders × units array (NaN = missing), from the coincidence
    matrix of the pairable values (Krippendorff 2011): its non-empty cells c ≤ k as weights o_ck (o_ck + o_kc
    off the diagonal, since δ² is symmetric) with their δ²_ck, the expected disagreement D_e and the number of
    pairs of judgments Σ_u m_u(m_u − 1)/2. None when α is undefined (no unit rated twice, fewer than two distinct
    pairable values, or D_e = 0). Sparse throughout but for D_e at the ratio level (K × K, in rows)."""
    import numpy as np

    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] == 0:
        return None
    m_all = (~np.isnan(data)).sum(axis=0)
    keep = m_all >= 2
    if not keep.any():
        return None
    sub, m = data[:, keep], m_all[keep]
    unit = np.nonzero(~np.isnan(sub.T))[0]  # the unit of each rating, ratings in unit order
    values, inverse = np.unique(sub.T[~np.isnan(sub.T)], return_inverse=True)
    if len(values) < 2:
        return None
    k = len(values)
    # (unit, value, count) of each distinct value within a unit, in unit order
    keys, counts = np.unique(unit * k + inverse, return_counts=True)
    t_unit, t_value = keys // k, keys % k
    # every ordered pair of those triples within a unit: triple i with each triple of its unit
    width = np.bincount(t_unit, minlength=len(m))[t_unit]  # distinct values in the triple's unit
    first = np.searchsorted(t_unit, t_unit)  # the unit's first triple
    left = np.repeat(np.arange(len(keys)), width)
    offset = np.arange(len(left)) - np.repeat(np.cumsum(width) - width, width)
    right = np.repeat(first, width) + offset
    same = left == right
    # o_ck += n_uc (n_uk − [c = k]) / (m_u − 1)
    w = counts[left] * (counts[right] - same) / (m[t_unit[left]] - 1)
    c, kk = t_value[left], t_value[right]
    n = np.bincount(c, weights=w, minlength=k)  # the marginals n_c; their total n.. = the pairable values
    upper = c <= kk
    cell, where = np.unique(c[upper] * k + kk[upper], return_inverse=True)
    weights = np.bincount(where, weights=(w * np.where(same, 1, 2))[upper])  # o_cc, or o_ck + o_kc
    deltas = _delta(level, values, n, cell // k, cell % k)
    total = float(n.sum())
    if level == "nominal":
        spread = total * total - float((n * n).sum())
    elif level in ("interval", "ordinal"):  # Σ_c Σ_k n_c n_k (x_c − x_k)² = 2 n.. Σ_c n_c (x_c − x̄)², x the
        x = values if level == "interval" else np.cumsum(n) - n / 2  # values or their mid-ranks
        spread = 2 * total * float((n * (x - float((n * x).sum()) / total) ** 2).sum())
    else:  # ratio: Σ_c Σ_k n_c n_k ((x_c − x_k)/(x_c + x_k))² over K × K, in blocks of rows
        rows, spread = max(1, 1_000_000 // k), 0.0
        for i in range(0, k, rows):  # rows i.. against columns i.. (δ² is symmetric): twice, less the square
            a, b, na = values[i:i + rows, None], values[None, i:], n[i:i + rows]
            sums = a + b
            ratio = np.divide(a - b, sums, out=np.zeros_like(sums), where=sums != 0)
            ratio *= ratio
            spread += 2 * float(na @ ratio @ n[i:]) - float(na @ ratio[:, :len(na)] @ na)
    d_e = spread / (total * (total - 1))
    if not d_e > 0:
        return None
    d_o = float((weights * deltas).sum()) / total
    pairs = int((m * (m - 1) // 2).sum())
    return 1.0 - d_o / d_e, d_e, weights, deltas, pairs


def coincidence_alpha(matrix: Sequence[Sequence[float | None]], level: str) -> float | None:
    """Krippendorff's α computed here from the coincidence matrix, α = 1 − D_o/D_e (the point estimate that
    :func:`alpha_ci` bootstraps; it equals :func:`krippendorff_alpha`); None where α is undefined."""
    if level not in ALPHA_LEVELS:
        raise ReliabilityError(f"unknown level {level!r} (one of {', '.join(ALPHA_LEVELS)})")
    parts = _coincidences(_reliability_array(matrix), level)
    return None if parts is None else parts[0]


#: Most pairs drawn at once when resampling draw by draw (bounds the memory of :func:`alpha_ci`).
_DRAW_CHUNK = 2_000_000
#: :func:`alpha_ci` draws each resample's counts per cell from the multinomial distribution where M is at least
#: this many times the number of cells (faster there), else the M pairs one by one (alias method).
_MULTINOMIAL_DRAWS_PER_CELL = 3


def _alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table (Vose's construction) of the probabilities ``p``: draw cell j uniformly, keep it with
    probability ``keep[j]``, else take ``alias[j]`` — one draw from ``p`` in constant time."""
    import numpy as np

    n = len(p)
    scaled = (p * n).tolist()
    keep, alias = np.ones(n), np.arange(n)
    small = [i for i, q in enumerate(scaled) if q < 1]
    large = [i for i, q in enumerate(scaled) if q >= 1]
    while small and large:
        s, g = small.pop(), large[-1]
        keep[s], alias[s] = scaled[s], g
        scaled[g] += scaled[s] - 1
        if scaled[g] < 1:
            small.append(large.pop())
    return keep, alias


def alpha_ci(matrix: Sequence[Sequence[float | None]], level: str, *, n_boot: int = 1000, seed: int = 0,
             confidence: float = 0.95) -> tuple[float, float] | None:
    """Bootstrap confidence interval ``(lo, hi)`` of Krippendorff's α of a coders × units matrix (None = missing);
    None where α is undefined (the cases of :func:`krippendorff_alpha`). The same data, ``n_boot`` and ``seed``
    always give the same interval (numpy's ``default_rng(seed)``).

    This is our reading of Krippendorff's bootstrap of α (Hayes & Krippendorff 2007, "Answering the call for a
    standard reliability measure for coding data", Communication Methods and Measures 1:77-89; Krippendorff,
    "Algorithm for bootstrapping a distribution of α", 2006, rev. 2011), implemented as follows:

    * the coincidence matrix o_ck of the pairable values (those of units rated at least twice; each ordered pair of
      values within unit u adds 1/(m_u − 1)), n.. its total, and the metric δ²_ck of the level (nominal 0/1,
      interval (c − k)², ratio ((c − k)/(c + k))², ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)² with the marginal
      counts n_g of the data, kept fixed);
    * the expected disagreement D_e of the data is kept fixed;
    * each resample draws M = Σ_u m_u(m_u − 1)/2 pairs (the number of pairs of judgments) with replacement from the
      coincidence cells, cell ck with probability o_ck/n.., and computes D_o* as the mean δ²_ck of its draws and
      α* = 1 − D_o*/D_e;
    * the interval is the percentile interval of the ``n_boot`` α* values (numpy's linear quantiles at
      (1 − confidence)/2 and (1 + confidence)/2).

    Krippendorff's further adjustments of the distribution (for the probability of α falling below a minimum) are
    not applied. How the draws are made does not change their distribution: as δ² is symmetric, cells ck and kc are
    drawn as one cell of weight o_ck + o_kc; where there are few non-empty cells (3 per cell ≤ M) only the number
    of draws per cell matters to D_o*, so each resample's counts are drawn at once from the multinomial
    distribution; otherwise the M draws are made one by one by Walker's alias method. Perfect agreement gives
    (1.0, 1.0).
    """
    if level not in ALPHA_LEVELS:
        raise ReliabilityError(f"unknown level {level!r} (one of {', '.join(ALPHA_LEVELS)})")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer (got {n_boot!r})")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (got {confidence!r})")
    parts = _coincidences(_reliability_array(matrix), level)
    return None if parts is None else _bootstrap(parts, n_boot, seed, confidence)


def _bootstrap(parts: tuple[float, float, np.ndarray, np.ndarray, int], n_boot: int, seed: int,
               confidence: float) -> tuple[float, float]:
    """The percentile interval of ``n_boot`` bootstrap α* values of :func:`_coincidences`' ``parts``."""
    import numpy as np

    _, d_e, weights, deltas, pairs = parts
    p = weights / weights.sum()
    rng = np.random.default_rng(seed)
    if _MULTINOMIAL_DRAWS_PER_CELL * len(p) <= pairs:  # few cells: each resample's counts per cell at once
        d_o = rng.multinomial(pairs, p, size=n_boot) @ deltas / pairs
    else:  # many cells: M single draws per resample by the alias method
        keep, alias = _alias_table(p)
        rows, parts_o = max(1, _DRAW_CHUNK // pairs), []
        for start in range(0, n_boot, rows):
            x = rng.random((min(rows, n_boot - start), pairs)) * len(p)
            j = np.minimum(x.astype(np.int64), len(p) - 1)
            parts_o.append(deltas[np.where(x - j < keep[j], j, alias[j])].mean(axis=1))
        d_o = np.concatenate(parts_o)
    boot = 1.0 - d_o / d_e
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [tail, 1 - tail])
    return float(lo), float(hi)


def alpha_summary(matrix: Sequence[Sequence[float | None]], level: str, *, n_boot: int = 1000,
                  seed: int = 0) -> dict[str, Any]:
    """``{"alpha", "ci95", "level", "coders", "units"}`` of a coders × units matrix, agreement as the papers report
    it: α (:func:`coincidence_alpha`, equal to :func:`krippendorff_alpha` but sparse, so continuous ratings with
    thousands of distinct values fit in memory; None where undefined) and its bootstrap 95 % interval
    ``[lo, hi]`` by :func:`alpha_ci` with ``n_boot`` resamples and ``seed`` (None where α is undefined or
    ``n_boot`` is 0)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 0:
        raise ValueError(f"n_boot must be 0 or a positive integer (got {n_boot!r})")
    if level not in ALPHA_LEVELS:
        raise ReliabilityError(f"unknown level {level!r} (one of {', '.join(ALPHA_LEVELS)})")
    parts = _coincidences(_reliability_array(matrix), level)
    alpha = None if parts is None else parts[0]
    ci = _bootstrap(parts, n_boot, seed, 0.95) if parts is not None and n_boot else None
    return {"alpha": alpha, "ci95": None if ci is None else [ci[0], ci[1]], "level": level, "coders": len(matrix),
            "units": max((len(row) for row in matrix), default=0)}


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
