"""Gibbs sampling of charts by CCV (DomainCQA Algorithm 1, `zuhyo.construct.select.sampling`): 303 of 10,000 charts.

Workload (issue 11, item 3): the pool is `zuhyo.testing.ccv_pool.synthetic_ccv_pool` — 10-bit CCVs with
DomainCQA Table 4's proportions of complex charts (Axis 8 % ... Color 78 %) and correlated attributes (one shared
"overall complexity" factor plus Color–Legend, Pattern–Element, Subplot–Type links), so the joint distribution is
skewed over several hundred of the 1,024 cells. For each of ``--runs`` seeds it times `gibbs_sample` (the whole
chain, from line 3's random start until the distribution stabilises) and the statistics, and reports medians of:
seconds, sweeps, joint-CCV TVD, L1-score TVD, largest attribute gap; beside them the same figures for a seeded
uniform random sample of the same size (`random_tvd_joint`) and the smallest joint TVD any 303-subset can reach
(`min_tvd_joint`: cell counts rounded by largest remainders).

    python bench/gibbs_sampling.py                 # 303 of 10,000, 7 seeds
    python bench/gibbs_sampling.py --pool 100000 --n 1000 --runs 3 --quota-groups 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

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
    ap.add_argument("--quota-groups", type=int, default=0,
                    help="also balance over this many groups of skewed sizes (proportional quotas)")
    args = ap.parse_args()

    pool = synthetic_ccv_pool(args.pool, 0)
    groups = None
    if args.quota_groups:
        sizes = np.arange(1, args.quota_groups + 1, dtype=float)
        groups = np.random.default_rng(1).choice([f"g{i}" for i in range(args.quota_groups)], size=args.pool,
                                                 p=sizes / sizes.sum()).tolist()
    rows = []
    for seed in range(args.runs):
        t0 = time.perf_counter()
        r = gibbs_sample(pool, args.n, seed, groups=groups)
        stats = sample_stats(pool, r.indices, seed)
        seconds = time.perf_counter() - t0
        rnd = uniform_sample(len(pool), args.n, seed)
        rows.append({"seconds": seconds, "sweeps": r.sweeps, "stabilized": r.stabilized, **stats,
                     "random_tvd_score": tvd_score(pool, rnd), "random_max_attr_diff": max_attr_diff(pool, rnd)})
        assert stats["random_tvd_joint"] == tvd_joint(pool, rnd)

    def med(key: str) -> float:
        return float(statistics.median(float(row[key]) for row in rows))

    summary = {
        "pool": args.pool, "n": args.n, "runs": args.runs, "quota_groups": args.quota_groups,
        "pool_cells": int(len(np.unique(cell_codes(pool)))),
        "seconds_median": med("seconds"), "seconds_max": max(float(row["seconds"]) for row in rows),
        "sweeps_median": med("sweeps"), "stabilized": sum(bool(row["stabilized"]) for row in rows),
        "tvd_joint": med("tvd_joint"), "random_tvd_joint": med("random_tvd_joint"),
        "min_tvd_joint": min_tvd_joint(pool, args.n),
        "tvd_score": med("tvd_score"), "random_tvd_score": med("random_tvd_score"),
        "max_attr_diff": med("max_attr_diff"), "random_max_attr_diff": med("random_max_attr_diff"),
    }
    print(f"{args.n} of {args.pool:,} charts ({summary['pool_cells']} CCV cells occupied), {args.runs} seeds, "
          f"medians:")
    print(f"  time      {summary['seconds_median']:.3f} s (max {summary['seconds_max']:.3f} s), "
          f"{summary['sweeps_median']:.0f} sweeps, {summary['stabilized']}/{args.runs} stabilised")
    for label, key in (("joint TVD", "tvd_joint"), ("score TVD", "tvd_score"), ("attr gap", "max_attr_diff")):
        print(f"  {label:<9} gibbs {summary[key]:.3f}   random {summary['random_' + key]:.3f}")
    print(f"  joint TVD floor (best possible {args.n}-subset): {summary['min_tvd_joint']:.3f}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
