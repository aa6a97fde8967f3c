"""Choose K of N charts so the sample keeps the pool's Chart Complexity Vector distribution: DomainCQA §3.1
("Chart sampling") and Algorithm 1 ("Gibbs sampling for chart selection in FQA pairs"). Pure: numpy arrays in,
indices and statistics out; no I/O (the CLI reads CSV files, the workspace stage records decisions).

Algorithm 1 as printed (line numbers of the paper)::

    1: Input: chart dataset D with CCV(c) for each c ∈ D
    2: Output: selected benchmark charts S
    3: Initialize: randomly select initial S ⊂ D of size target_size
    4: repeat
    5:   for each chart c* ∈ S
    6:     Select aspect α ∈ CCV
    7:     Fix other aspects, sample v ~ P(α | S, D)
    8:     Find c_new ∈ D with α(c_new) = v
    9:     if CCV(S ∪ {c_new} − {c*}) is valid then
    10:      Replace c* with c_new in S
    11:    end if
    12:  end for
    13: until distribution stabilizes; return S

:func:`gibbs_sample` follows these lines one by one. The paper leaves five things undefined; how they are read
here (each is marked ``[line N]`` in the code):

- line 6, *which* aspect: one of the 10 attributes uniformly at random per step (random-scan Gibbs);
- line 7, ``P(α | S, D)``: the pool's conditional distribution of attribute α given the other nine aspects
  fixed at c*'s values, ``P_D(α = v | CCV_{-α} = CCV_{-α}(c*))`` (the pool D is the distribution to preserve,
  §3.1; S enters through c*, the chart being resampled). c* ∈ D, so the condition always has support;
- line 8, *which* c_new: a chart of D not already in S, drawn uniformly among those whose CCV equals c*'s with
  α set to v (the other aspects stay fixed, as line 7 says); when D has no such chart outside S, uniformly among
  the charts outside S with ``α(c_new) = v`` (line 8's words alone); when there is none either, the step is
  skipped. With quotas, c_new is drawn from c*'s group only;
- line 9, *valid*: the replacement does not increase the total variation distance between the joint 10-bit CCV
  distribution of S and that of D (and, with quotas, keeps every group's count, which drawing c_new from c*'s
  group guarantees). Replacements that leave the distance unchanged are valid, so S keeps mixing within a
  distribution (this is what lets mass travel between CCV cells one aspect at a time);
- line 13, *stabilizes*: the joint distance has not decreased for ``patience`` consecutive sweeps (one sweep =
  lines 5–12 once over S), or ``max_sweeps`` sweeps have run; which of the two happened is reported.

Line 3 reads "randomly select": uniformly without replacement (within each group's quota when quotas are given).
Everything random comes from one ``numpy.random.Generator`` seeded with ``seed``, so a seed fixes the sample.

Quotas (zuhyo's, in neither paper; HakushoBench §4 only observes that its QA per white paper are "relatively
balanced", it does not balance them by construction) constrain how many
charts come from each group (source, image type, document): proportional to the group's share of the pool
(largest remainders) or explicit counts. The target distribution stays the whole pool's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from zuhyo.errors import DataError
from zuhyo.schema import CCV_ATTRIBUTES

N_ATTRS = len(CCV_ATTRIBUTES)
N_CELLS = 1 << N_ATTRS
_WEIGHTS = (1 << np.arange(N_ATTRS)).astype(np.int64)  # attribute i is bit i of a chart's cell code


@dataclass(frozen=True)
class SampleResult:
    """What :func:`gibbs_sample` chose and how the chain ran."""

    indices: np.ndarray
    """Positions in the pool of the chosen charts, ascending (pool order)."""
    sweeps: int
    """Sweeps of lines 5–12 run."""
    stabilized: bool
    """True when line 13's stop was the distribution stabilising, False when ``max_sweeps`` ran out."""
    replacements: int
    """Valid replacements (line 10) that changed the distribution (moved a chart between CCV cells)."""
    skipped: int = 0
    """Steps skipped because line 8 found no c_new outside S (counted, not hidden)."""
    group_counts: dict[str, int] = field(default_factory=dict)
    """Charts chosen per group (empty without quotas)."""
    refine_swaps: int | None = None
    """Swaps made by zuhyo's refinement pass after the chain (:mod:`.sample_refine`); None when it was off."""


def cell_codes(ccvs: np.ndarray) -> np.ndarray:
    """Each chart's 10-bit CCV as one integer in [0, 1024) (attribute i = bit i)."""
    return (np.asarray(ccvs, dtype=np.int64) @ _WEIGHTS).astype(np.int64)


def validate_ccvs(ccvs: np.ndarray) -> np.ndarray:
    """The pool as an (N, 10) uint8 array of 0/1, or ``DataError`` naming the first bad row."""
    arr = np.asarray(ccvs)
    if arr.ndim != 2 or arr.shape[1] != N_ATTRS:
        raise DataError(f"CCVs must be an (N, {N_ATTRS}) array, got shape {arr.shape}")
    bad = np.argwhere((arr != 0) & (arr != 1))
    if len(bad):
        r, c = bad[0]
        raise DataError(f"CCV row {r}: {CCV_ATTRIBUTES[c].name} is {arr[r, c].item()!r}, expected 0 or 1")
    return arr.astype(np.uint8)


def quota_counts(groups: Sequence[str], k: int, counts: Mapping[str, int] | None = None) -> dict[str, int]:
    """Charts to take per group: ``counts`` checked (sum K, each within its group's size), or, when None,
    proportional to each group's size by largest remainders (ties: the group named first in sort order)."""
    sizes: dict[str, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    n = len(groups)
    if counts is not None:
        for g, c in counts.items():
            if g not in sizes:
                raise DataError(f"quota group {g!r} has no chart in the pool")
            if c < 0 or c > sizes[g]:
                raise DataError(f"quota for group {g!r} is {c}, but the group has {sizes[g]} charts")
        if sum(counts.values()) != k:
            raise DataError(f"quotas sum to {sum(counts.values())}, expected n = {k}")
        return {g: int(counts.get(g, 0)) for g in sorted(sizes)}
    exact = {g: k * sizes[g] / n for g in sorted(sizes)}
    out = {g: int(np.floor(v)) for g, v in exact.items()}
    rest = k - sum(out.values())
    for g in sorted(exact, key=lambda g: (-(exact[g] - out[g]), g))[:rest]:
        out[g] += 1
    return out


def gibbs_sample(ccvs: np.ndarray, k: int, seed: int, *, groups: Sequence[str] | None = None,
                 quotas: Mapping[str, int] | None = None, patience: int = 10,
                 max_sweeps: int = 500, refine: bool = True) -> SampleResult:
    """DomainCQA Algorithm 1: choose ``k`` of the pool's charts (rows of ``ccvs``, shape (N, 10), 0/1) whose CCV
    distribution matches the pool's; see the module docstring for the lines and how their gaps are read.

    ``refine`` (zuhyo's addition, on by default) runs :func:`.sample_refine.refine_sample` on the chain's result so
    the per-attribute proportions and the score histogram match too; ``refine=False`` is Algorithm 1 alone.

    ``groups`` (one label per chart) turns on quotas: ``quotas`` maps group → count (summing to ``k``), or, when
    None, each group gets its proportional share (:func:`quota_counts`).
    """
    pool = validate_ccvs(ccvs)
    n = len(pool)
    if n == 0:
        raise DataError("the pool is empty")
    if k <= 0 or k > n:
        raise DataError(f"n must be between 1 and the pool size {n}, got {k}")
    if groups is not None and len(groups) != n:
        raise DataError(f"{len(groups)} group labels for {n} charts")
    rng = np.random.default_rng(seed)
    codes = cell_codes(pool)
    code_list = codes.tolist()
    pool_count = np.bincount(codes, minlength=N_CELLS)
    target = (k * pool_count / n).tolist()  # S's cell counts when it matches D exactly
    pool_count_l = pool_count.tolist()

    # Groups as small ints; without quotas every chart is in group 0.
    names = sorted(set(groups)) if groups is not None else [""]
    gid = {g: i for i, g in enumerate(names)}
    group_of = [gid[g] for g in groups] if groups is not None else [0] * n
    want = quota_counts(groups, k, quotas) if groups is not None else {"": k}

    # [line 3] S ⊂ D of size target_size, uniformly at random (within each group's quota).
    chosen: list[int] = []
    by_group = [np.flatnonzero(np.asarray(group_of) == i) for i in range(len(names))]
    for i, g in enumerate(names):
        if want[g]:
            chosen.extend(rng.choice(by_group[i], size=want[g], replace=False).tolist())
    in_s = np.zeros(n, dtype=bool)
    in_s[chosen] = True

    # Charts outside S, by (group, cell) and by group, with positions for O(1) removal.
    out_cell: dict[int, list[int]] = {}
    out_group: list[list[int]] = [[] for _ in names]
    pos_cell: dict[int, int] = {}
    pos_group: dict[int, int] = {}
    for i in np.flatnonzero(~in_s).tolist():
        key = group_of[i] * N_CELLS + code_list[i]
        lst = out_cell.setdefault(key, [])
        pos_cell[i] = len(lst)
        lst.append(i)
        pos_group[i] = len(out_group[group_of[i]])
        out_group[group_of[i]].append(i)

    def take_out(i: int) -> None:  # i joins S
        for lst, pos in ((out_cell[group_of[i] * N_CELLS + code_list[i]], pos_cell), (out_group[group_of[i]],
                                                                                        pos_group)):
            j = pos.pop(i)
            last = lst.pop()
            if last != i:
                lst[j] = last
                pos[last] = j

    def put_back(i: int) -> None:  # i leaves S
        lst = out_cell.setdefault(group_of[i] * N_CELLS + code_list[i], [])
        pos_cell[i] = len(lst)
        lst.append(i)
        pos_group[i] = len(out_group[group_of[i]])
        out_group[group_of[i]].append(i)

    s_count = np.bincount(codes[chosen], minlength=N_CELLS).tolist()
    best = _l1(s_count, target)
    stale, sweeps, replacements, skipped, stabilized = 0, 0, 0, 0, False
    while sweeps < max_sweeps:  # [line 4] repeat
        sweeps += 1
        alphas = rng.integers(0, N_ATTRS, size=k).tolist()
        draws = rng.random(size=(k, 2)).tolist()
        for slot in range(k):  # [line 5] for each chart c* ∈ S
            c_star = chosen[slot]
            x = code_list[c_star]
            bit = 1 << alphas[slot]  # [line 6] aspect α, uniformly at random
            # [line 7] v ~ P_D(α | other aspects of c*): pool counts of the two cells that differ only in α.
            n1, n0 = pool_count_l[x | bit], pool_count_l[x & ~bit]
            v = 1 if draws[slot][0] * (n0 + n1) < n1 else 0
            y = (x | bit) if v else (x & ~bit)
            # [line 8] c_new ∉ S with CCV = c*'s except α = v; else any c_new ∉ S with α(c_new) = v.
            grp = group_of[c_star]
            cands = out_cell.get(grp * N_CELLS + y)
            if cands:
                c_new = cands[int(draws[slot][1] * len(cands))]
            else:
                c_new = _any_with_bit(out_group[grp], code_list, bit, v, rng)
                if c_new < 0:
                    skipped += 1
                    continue
                y = code_list[c_new]
            # [line 9] valid: the joint TVD between S and D does not increase.
            if y != x:
                delta = (abs(s_count[x] - 1 - target[x]) - abs(s_count[x] - target[x])
                         + abs(s_count[y] + 1 - target[y]) - abs(s_count[y] - target[y]))
                if delta > 1e-12:
                    continue
                s_count[x] -= 1
                s_count[y] += 1
                replacements += 1
            # [line 10] replace c* with c_new in S
            take_out(c_new)
            put_back(c_star)
            chosen[slot] = c_new
        now = _l1(s_count, target)  # [line 13] until the distribution stabilizes
        if now < best - 1e-9:
            best, stale = now, 0
        else:
            stale += 1
            if stale >= patience:
                stabilized = True
                break
    refine_swaps = None
    if refine and k < n:
        from zuhyo.construct.select.sample_refine import refine_sample

        refined = refine_sample(pool, chosen, seed, groups=group_of if groups is not None else None)
        chosen, refine_swaps = refined.indices, refined.swaps
    idx = np.sort(np.asarray(chosen, dtype=np.int64))
    counts = {g: int(sum(1 for i in chosen if group_of[i] == gid[g])) for g in names} if groups is not None else {}
    return SampleResult(indices=idx, sweeps=sweeps, stabilized=stabilized, replacements=replacements,
                        skipped=skipped, group_counts=counts, refine_swaps=refine_swaps)


def _l1(s_count: list[int], target: list[float]) -> float:
    return float(sum(abs(a - b) for a, b in zip(s_count, target, strict=True)))


def _any_with_bit(candidates: list[int], code_list: list[int], bit: int, v: int, rng: np.random.Generator,
                  tries: int = 64) -> int:
    """A uniformly drawn chart of ``candidates`` with the aspect ``bit`` equal to ``v`` (line 8's words alone);
    -1 when ``tries`` draws find none (the aspect value is then rare or absent among them)."""
    if not candidates:
        return -1
    for r in rng.integers(0, len(candidates), size=tries).tolist():
        c = candidates[r]
        if bool(code_list[c] & bit) == bool(v):
            return c
    return -1


def uniform_sample(n: int, k: int, seed: int) -> np.ndarray:
    """The random baseline: ``k`` of ``n`` positions uniformly without replacement, seeded (stream 1 of ``seed``,
    so it differs from the Gibbs chain's draws), ascending."""
    return np.sort(np.random.default_rng([seed, 1]).choice(n, size=k, replace=False))


def _tvd(a: np.ndarray, b: np.ndarray) -> float:
    return float(0.5 * np.abs(a / a.sum() - b / b.sum()).sum())


def tvd_joint(pool: np.ndarray, indices: np.ndarray) -> float:
    """Total variation distance between the joint 10-bit CCV distributions of the sample and the pool."""
    codes = cell_codes(pool)
    return _tvd(np.bincount(codes[indices], minlength=N_CELLS), np.bincount(codes, minlength=N_CELLS))


def tvd_score(pool: np.ndarray, indices: np.ndarray) -> float:
    """Total variation distance between the histograms of the L1 complexity score (DomainCQA §4.1: the sum of
    the CCV, 0–10) of the sample and the pool."""
    scores = np.asarray(pool, dtype=np.int64).sum(axis=1)
    return _tvd(np.bincount(scores[indices], minlength=N_ATTRS + 1), np.bincount(scores, minlength=N_ATTRS + 1))


def max_attr_diff(pool: np.ndarray, indices: np.ndarray) -> float:
    """The largest gap, over the 10 attributes, between the sample's and the pool's proportion of 1s."""
    p = np.asarray(pool, dtype=np.float64)
    return float(np.abs(p[indices].mean(axis=0) - p.mean(axis=0)).max())


def sample_stats(pool: np.ndarray, indices: np.ndarray, seed: int) -> dict[str, float | int]:
    """The sampling report: ``{"n", "pool", "tvd_joint", "tvd_score", "max_attr_diff", "random_tvd_joint"}``;
    ``random_tvd_joint`` is :func:`tvd_joint` of :func:`uniform_sample` of the same size and seed."""
    idx = np.asarray(indices, dtype=np.int64)
    return {"n": int(len(idx)), "pool": int(len(pool)), "tvd_joint": tvd_joint(pool, idx),
            "tvd_score": tvd_score(pool, idx), "max_attr_diff": max_attr_diff(pool, idx),
            "random_tvd_joint": tvd_joint(pool, uniform_sample(len(pool), len(idx), seed))}


def min_tvd_joint(pool: np.ndarray, k: int) -> float:
    """The smallest joint TVD any ``k``-subset can reach (cell counts rounded by largest remainders; every pool
    cell holds enough charts): the floor against which :func:`tvd_joint` of a sample is read."""
    counts = np.bincount(cell_codes(pool), minlength=N_CELLS)
    target = k * counts / counts.sum()
    best = np.floor(target)
    order = np.argsort(-(target - best), kind="stable")
    best[order[: k - int(best.sum())]] += 1
    return float(0.5 * np.abs(best / k - counts / counts.sum()).sum())


@dataclass(frozen=True)
class CCVTable:
    """A CSV of CCVs, parsed: ``id`` and the 10 attribute columns (other columns kept as they were)."""

    header: list[str]
    rows: list[list[str]]
    ids: list[str]
    ccvs: np.ndarray


def parse_ccv_csv(text: str, name: str = "CSV") -> CCVTable:
    """Parse a CSV whose columns are ``id`` and the 10 names of ``CCV_ATTRIBUTES`` (matched case-insensitively;
    further columns are kept and ignored), values 0/1. Raises ``DataError`` naming ``name`` and the line for a
    missing column, a short row, a value other than 0/1, an empty or duplicate id, or no rows at all."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = next(reader, None)
    if not header:
        raise DataError(f"{name}: empty (expected a header: id, {', '.join(a.name for a in CCV_ATTRIBUTES)})")
    where = {h.strip().lower(): i for i, h in enumerate(header)}
    missing = [c for c in ["id", *(a.name for a in CCV_ATTRIBUTES)] if c.lower() not in where]
    if missing:
        raise DataError(f"{name} line 1: missing column(s) {', '.join(missing)}")
    id_col = where["id"]
    cols = [where[a.name.lower()] for a in CCV_ATTRIBUTES]
    rows: list[list[str]] = []
    ids: list[str] = []
    values: list[list[int]] = []
    first_line: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise DataError(f"{name} line {line}: {len(row)} fields, the header has {len(header)}")
        rid = row[id_col].strip()
        if not rid:
            raise DataError(f"{name} line {line}: empty id")
        if rid in first_line:
            raise DataError(f"{name} line {line}: duplicate id {rid!r} (first on line {first_line[rid]})")
        first_line[rid] = line
        vec = []
        for a, c in zip(CCV_ATTRIBUTES, cols, strict=True):
            cell = row[c].strip()
            if cell not in ("0", "1"):
                raise DataError(f"{name} line {line}: {a.name} of {rid!r} is {cell!r}, expected 0 or 1")
            vec.append(int(cell))
        rows.append(row)
        ids.append(rid)
        values.append(vec)
    if not rows:
        raise DataError(f"{name}: no rows after the header")
    return CCVTable(header=header, rows=rows, ids=ids, ccvs=np.asarray(values, dtype=np.uint8))


def format_ccv_csv(table: CCVTable, indices: Sequence[int]) -> str:
    """The header and the rows at ``indices`` (in the order given), as CSV text."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(table.header)
    w.writerows(table.rows[i] for i in indices)
    return buf.getvalue()
