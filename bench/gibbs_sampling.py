"""Gibbs sampling of charts by CCV (DomainCQA Algorithm 1, `zuhyo.construct.select.sampling`): 303 of 10,000 charts.

Workload (issue 11, item 3): the pool is `zuhyo.testing.ccv_pool.synthetic_ccv_pool` — 10-bit CCVs with
DomainCQA Table 4's proportions of complex charts (Axis 8 % ... Color 78 %) and correlated attributes (one shared
"overall complexity" factor plus Color–Legend, Pattern–Element, Subplot–Type links), so the joint distribution is
skewed over several hundred of the 1,024 cells. For each of ``--runs`` seeds it times `gibbs_sample` (the whole
chain, from line 3's random start until the distribution stabilises) and the statistics, and reports medians of:
seconds, sweeps, joint-CCV TVD, L1-score TVD, largest attribute gap — for Algorithm 1 as printed (`refine=False`)
and with zuhyo's refinement pass (`refine=True`, the default; `zuhyo.construct.select.sample_refine`); beside them
the medians of ``--random`` seeded uniform random samples of the same size and the smallest joint TVD any
303-subset can reach (`min_tvd_joint`: cell counts rounded by largest remainders).

Targets (issue 24): with the refinement, largest attribute gap <= 0.015 and both the score-histogram and the joint
TVD below the median of 100 random samples, in under 5 s.

    python bench/gibbs_sampling.py                 # 303 of 10,000, 7 seeds
    python bench/gibbs_sampling.py --pool 100000 --n 1000 --runs 3 --quota-groups 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np

from zuhyo.construct.select.sampling import (
    cell_codes,
    gibbs_sample,
    max_attr_diff,
    min_tvd_joint,
    sample_stats,
    tvd_joint,
    tvd_score,
    uniform_sample,
)
from zuhyo.testing.ccv_pool import synthetic_ccv_pool


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=303)
    ap.add_argument("--runs", type=int, default=7, help="seeds 0..runs-1; medians are printed")
    ap.add_argument("--random", type=int, default=100, help="uniform random samples for the baseline medians")
    ap.add_argument("--quota-groups", type=int, default=0,
                    help="also balance over this many groups of skewed sizes (proportional quotas)")
    args = ap.parse_args()

    pool = synthetic_ccv_pool(args.pool, 0)
    groups = None
    if args.quota_groups:
        sizes = np.arange(1, args.quota_groups + 1, dtype=float)
        groups = np.random.default_rng(1).choice([f"g{i}" for i in range(args.quota_groups)], size=args.pool,
                                                 p=sizes / sizes.sum()).tolist()
    rows: dict[str, list[dict[str, float]]] = {"paper": [], "refined": []}
    for seed in range(args.runs):
        for label, refine in (("paper", False), ("refined", True)):
            t0 = time.perf_counter()
            r = gibbs_sample(pool, args.n, seed, groups=groups, refine=refine)
            stats = sample_stats(pool, r.indices, seed)
            seconds = time.perf_counter() - t0
            rows[label].append({"seconds": seconds, "sweeps": r.sweeps, "stabilized": r.stabilized,
                                "swaps": r.refine_swaps or 0, **stats})
    rnd = [uniform_sample(len(pool), args.n, seed) for seed in range(args.random)]
    random_stats = {"tvd_joint": [tvd_joint(pool, i) for i in rnd], "tvd_score": [tvd_score(pool, i) for i in rnd],
                    "max_attr_diff": [max_attr_diff(pool, i) for i in rnd]}

    def med(label: str, key: str) -> float:
        return float(statistics.median(float(row[key]) for row in rows[label]))

    keys = ("tvd_joint", "tvd_score", "max_attr_diff")
    summary: dict[str, Any] = {
        "pool": args.pool, "n": args.n, "runs": args.runs, "random_samples": args.random,
        "quota_groups": args.quota_groups, "pool_cells": int(len(np.unique(cell_codes(pool)))),
        "min_tvd_joint": min_tvd_joint(pool, args.n),
        **{f"random_{k}": float(statistics.median(v)) for k, v in random_stats.items()},
    }
    for label in rows:
        summary[label] = {"seconds_median": med(label, "seconds"),
                          "seconds_max": max(float(row["seconds"]) for row in rows[label]),
                          "sweeps_median": med(label, "sweeps"), "swaps_median": med(label, "swaps"),
                          "stabilized": sum(bool(row["stabilized"]) for row in rows[label]),
                          **{k: med(label, k) for k in keys},
                          **{f"worst_{k}": max(float(row[k]) for row in rows[label]) for k in keys}}
    print(f"{args.n} of {args.pool:,} charts ({summary['pool_cells']} CCV cells occupied), {args.runs} seeds "
          f"(medians; worst in brackets), random: median of {args.random} samples")
    print(f"  {'':<10} {'Algorithm 1':>18} {'+ refinement':>18} {'random':>8}")
    for name, key in (("joint TVD", "tvd_joint"), ("score TVD", "tvd_score"), ("attr gap", "max_attr_diff")):
        cells = [f"{summary[lb][key]:.3f} ({summary[lb]['worst_' + key]:.3f})"
                 for lb in ("paper", "refined")]
        print(f"  {name:<10} {cells[0]:>18} {cells[1]:>18} {summary['random_' + key]:>8.3f}")
    print("  time       " + "   ".join(f"{lb} {summary[lb]['seconds_median']:.3f} s (max "
                                       f"{summary[lb]['seconds_max']:.3f} s)" for lb in ("paper", "refined")))
    print(f"  joint TVD floor (best possible {args.n}-subset): {summary['min_tvd_joint']:.3f}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
