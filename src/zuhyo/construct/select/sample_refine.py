"""A refinement pass after DomainCQA Algorithm 1 (zuhyo's addition, not in the paper): swap members of the sample
for charts outside it so that every view of the complexity distribution matches the pool's, not only the joint.

Algorithm 1 (:func:`zuhyo.construct.select.sampling.gibbs_sample`) accepts a replacement when the joint 10-bit
CCV distance does not grow. DomainCQA §3.1 states the aim as "preserve the original complexity distribution"; the
distributions a reader looks at are the per-attribute proportions (Appendix A.2, Table 4) and the L1 complexity
score histogram (§4.1, Figure 4). With a few hundred charts over several hundred CCV cells most cells hold under
one chart, so a sample close to the best possible joint can still miss an attribute's share by several charts.

The pass minimises, in charts, ``2·J + A + H``: the joint cell-count L1 gap ``J`` (= 2k · joint TVD), the sum over
the 10 attributes of the gap between the sample's count of 1s and k times the pool's share ``A``, and the L1 gap
of the score histogram ``H`` (= 2k · score TVD). The joint's weight (:data:`JOINT_WEIGHT`) was chosen on the bench
pool (``bench/gibbs_sampling.py``): 1 leaves the joint 0.01 further from its floor, 4 lets the attribute gaps grow
back to Algorithm 1's. For each member of the sample, in a seeded random order, it finds
the CCV cell whose chart would lower the sum the most when swapped in (every chart of a cell changes the sum
alike, so the search is over the ≤ 1,024 cells, not the charts), and swaps in a chart of that cell drawn
uniformly among those outside the sample (of the member's quota group). A pass with no improving swap, or
``max_passes`` passes, ends it. Deterministic for a seed; quotas are kept (swaps stay within a group).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Weight of the joint gap against the attribute and score gaps (see the module docstring).
JOINT_WEIGHT = 2.0


@dataclass(frozen=True)
class Refined:
    """The refined sample and how the pass ran."""

    indices: list[int]
    """Positions in the pool of the sample's charts (in slot order, not sorted)."""
    swaps: int
    """Swaps made."""
    passes: int
    """Passes over the sample run."""


def refine_sample(pool: np.ndarray, chosen: Sequence[int], seed: int, *, groups: Sequence[int] | None = None,
                  max_passes: int = 20) -> Refined:
    """Refine ``chosen`` (positions in ``pool``, shape (N, attributes), 0/1, validated by the caller) as the module
    docstring says; ``groups`` (one small int per chart) keeps each swap within the member's group."""
    rng = np.random.default_rng([seed, 2])  # a stream of its own: the chain's draws are untouched
    n, k = len(pool), len(chosen)
    n_attrs = pool.shape[1]
    n_cells = 1 << n_attrs
    bits = np.asarray(pool, dtype=np.int64)
    codes = bits @ (1 << np.arange(n_attrs))  # attribute i = bit i, as sampling.cell_codes
    scores = bits.sum(axis=1)
    cell_bits = ((np.arange(n_cells)[:, None] >> np.arange(n_attrs)) & 1).astype(np.float64)
    cell_score = cell_bits.sum(axis=1).astype(np.int64)
    group_of = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    n_groups = int(group_of.max()) + 1
    target_cell = k * np.bincount(codes, minlength=n_cells) / n
    target_attr = k * np.asarray(pool, dtype=np.float64).mean(axis=0)
    target_score = k * np.bincount(scores, minlength=n_attrs + 1) / n

    members = list(chosen)
    in_s = np.zeros(n, dtype=bool)
    in_s[members] = True
    s_cell = np.bincount(codes[members], minlength=n_cells).astype(np.float64)
    s_attr = np.asarray(pool, dtype=np.float64)[members].sum(axis=0)
    s_score = np.bincount(scores[members], minlength=n_attrs + 1).astype(np.float64)
    # Charts outside S per (group, cell): counts for the search, lists for the draw (swap-remove keeps O(1)).
    outside: dict[tuple[int, int], list[int]] = {}
    out_count = np.zeros((n_groups, n_cells), dtype=np.int64)
    for i in np.flatnonzero(~in_s).tolist():
        outside.setdefault((int(group_of[i]), int(codes[i])), []).append(i)
        out_count[group_of[i], codes[i]] += 1

    swaps = passes = 0
    while passes < max_passes:
        passes += 1
        improved = False
        for slot in rng.permutation(k).tolist():
            x = members[slot]
            cx, sx, g = int(codes[x]), int(scores[x]), int(group_of[x])
            # Gap changes when x leaves and a chart of cell c joins, for every cell c at once.
            add_cell = np.abs(s_cell + 1 - target_cell) - np.abs(s_cell - target_cell)
            d_joint = add_cell + (abs(s_cell[cx] - 1 - target_cell[cx]) - abs(s_cell[cx] - target_cell[cx]))
            d_joint[cx] = 0.0
            base = s_attr - cell_bits[cx] - target_attr
            d_attr = (np.abs(base) + cell_bits * (np.abs(base + 1) - np.abs(base))).sum(axis=1) \
                - np.abs(s_attr - target_attr).sum()
            add_score = np.abs(s_score + 1 - target_score) - np.abs(s_score - target_score)
            add_score += abs(s_score[sx] - 1 - target_score[sx]) - abs(s_score[sx] - target_score[sx])
            add_score[sx] = 0.0
            delta = JOINT_WEIGHT * d_joint + d_attr + add_score[cell_score]
            delta[out_count[g] == 0] = np.inf
            best = int(np.argmin(delta))
            if not delta[best] < -1e-9:
                continue
            cands = outside[(g, best)]
            j = int(rng.integers(len(cands)))
            y = cands[j]
            cands[j] = cands[-1]
            cands.pop()
            outside.setdefault((g, cx), []).append(x)
            out_count[g, best] -= 1
            out_count[g, cx] += 1
            s_cell[cx] -= 1
            s_cell[best] += 1
            s_attr += cell_bits[best] - cell_bits[cx]
            s_score[sx] -= 1
            s_score[cell_score[best]] += 1
            members[slot] = y
            swaps += 1
            improved = True
        if not improved:
            break
    return Refined(indices=members, swaps=swaps, passes=passes)
