"""Near-duplicate detection on a matplotlib chart corpus: zuhyo's filter against the pHash all-pairs anchor.

Issue 10 "Performance": recall and precision of the planted (copy, original) pairs, hashing time, clustering
time and peak memory at several corpus sizes, in one command, for

- **zuhyo**: :func:`zuhyo.construct.filter.checks.inspect_image` over the images (one decode: size, format, pHash,
  thumbnail) through :func:`zuhyo.construct.executor.map_items` (local processes), then crop-window descriptors,
  k-d tree candidates, verification (pre-check and full size, also through the executor) and star clusters
  (:mod:`zuhyo.construct.filter.near_duplicates`);
- **anchor**: ``imagehash.phash`` of every image (same process pool) and all pairs at Hamming distance <= 10
  with numpy.

zuhyo's predicted pairs are all pairs inside a predicted cluster; the anchor's are its pairs within distance (as
issue 10 counts them); the truth is the corpus manifest's copy -> original.

    python bench/chart_corpus.py /tmp/zuhyo_charts --n 20000     # once (cached)
    python bench/near_duplicates.py /tmp/zuhyo_charts --sizes 5000 10000 20000
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any


def _peak_rss_mib() -> float:
    """Peak resident memory of this process, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _inspect_measured(data: bytes) -> tuple[Any, float]:
    """zuhyo's per-image work and the worker's peak RSS so far (MiB): local workers are forked from a fork
    server, not from this process, so ``RUSAGE_CHILDREN`` does not see them."""
    from zuhyo.construct.filter.checks import inspect_image

    return inspect_image(data), _peak_rss_mib()


def _phash_measured(data: bytes) -> tuple[int, float]:
    return _phash_bits(data), _peak_rss_mib()


def _phash_bits(data: bytes) -> int:
    import imagehash
    from PIL import Image

    h = imagehash.phash(Image.open(io.BytesIO(data)))
    return int("".join("1" if b else "0" for b in h.hash.ravel()), 2)


def _pairs_of(groups: list[list[int]]) -> set[tuple[int, int]]:
    return {(min(a, b), max(a, b)) for g in groups for x, a in enumerate(g) for b in g[x + 1:]}


def _score(pred: set[tuple[int, int]], truth: set[tuple[int, int]]) -> dict[str, float]:
    tp = len(pred & truth)
    return {"recall": round(tp / len(truth), 4) if truth else 1.0,
            "precision": round(tp / len(pred), 4) if pred else 1.0, "predicted_pairs": len(pred)}


def run_zuhyo(datas: list[bytes], executor: str) -> tuple[list[list[int]], dict[str, float]]:
    from zuhyo.construct.executor import map_items
    from zuhyo.construct.filter.checks import Unreadable
    from zuhyo.construct.filter.feature_store import stack_features
    from zuhyo.construct.filter.near_duplicates import clusters, near_duplicate_candidates, verified_pairs

    t0 = time.perf_counter()
    measured = map_items(_inspect_measured, datas, executor=executor)
    feats = [m[0] for m in measured]
    worker_peak = max(m[1] for m in measured)
    del measured
    bad = [i for i, f in enumerate(feats) if isinstance(f, Unreadable) or not hasattr(f, "thumb")]
    if bad:
        raise SystemExit(f"{len(bad)} images failed, first: {feats[bad[0]]}")
    t1 = time.perf_counter()
    arrays = stack_features(feats)
    del feats
    t_stack = time.perf_counter()
    cands = near_duplicate_candidates(arrays)
    t2 = time.perf_counter()
    pairs = verified_pairs(arrays, cands, executor=executor)
    t3 = time.perf_counter()
    groups = clusters(len(datas), pairs)
    t4 = time.perf_counter()
    return groups, {"hash_s": round(t1 - t0, 2), "stack_s": round(t_stack - t1, 2),
                    "candidates_s": round(t2 - t_stack, 2), "verify_s": round(t3 - t2, 2),
                    "cluster_s": round(t4 - t1, 2), "total_s": round(t4 - t0, 2), "candidates": len(cands),
                    "verified": len(pairs), "peak_rss_workers_mib": round(worker_peak)}


def run_anchor(datas: list[bytes], executor: str, max_distance: int = 10
               ) -> tuple[set[tuple[int, int]], dict[str, float]]:
    """The anchor's predicted pairs (every pair within ``max_distance``, as the issue counts them) and timings."""
    import numpy as np

    from zuhyo.construct.executor import map_items

    t0 = time.perf_counter()
    measured = map_items(_phash_measured, datas, executor=executor)
    values = [m[0] for m in measured]
    t1 = time.perf_counter()
    bits = np.unpackbits(np.array([v.to_bytes(8, "big") for v in values], dtype="S8").view(np.uint8)
                         .reshape(-1, 8), axis=1).astype(np.uint8)
    n = len(values)
    pred: set[tuple[int, int]] = set()
    for start in range(0, n, 1024):  # all pairs, in blocks (Hamming = a.(1-b) + (1-a).b)
        block = bits[start:start + 1024].astype(np.int32)
        dist = block @ (1 - bits.T).astype(np.int32) + (1 - block) @ bits.T.astype(np.int32)
        rows, cols = np.nonzero(dist <= max_distance)
        keep = rows + start < cols
        pred.update(zip((rows[keep] + start).tolist(), cols[keep].tolist(), strict=True))
    t2 = time.perf_counter()
    return pred, {"hash_s": round(t1 - t0, 2), "search_s": round(t2 - t1, 2), "total_s": round(t2 - t0, 2),
                  "peak_rss_workers_mib": round(max(m[1] for m in measured))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("corpus", type=Path, help="folder made by bench/chart_corpus.py")
    p.add_argument("--sizes", type=int, nargs="+", default=[5000])
    p.add_argument("--executor", default="local")
    p.add_argument("--no-anchor", action="store_true")
    args = p.parse_args()
    manifest = json.loads((args.corpus / "manifest.json").read_text())
    files: list[str] = manifest["files"]
    index = {f: i for i, f in enumerate(files)}
    results: list[dict[str, Any]] = []
    for n in args.sizes:
        if n > len(files):
            sys.exit(f"the corpus has {len(files)} charts, fewer than {n}: python bench/chart_corpus.py "
                     f"{args.corpus} --n {n}")
        truth = {(index[o], index[c]) for c, o in manifest["duplicate_of"].items() if index[c] < n}
        datas = [(args.corpus / f).read_bytes() for f in files[:n]]
        groups, times = run_zuhyo(datas, args.executor)
        row: dict[str, Any] = {"n": n, "method": "zuhyo", **_score(_pairs_of(groups), truth), **times}
        row["peak_rss_mib"] = round(_peak_rss_mib())
        results.append(row)
        print(json.dumps(row), flush=True)
        if not args.no_anchor:
            pred, times = run_anchor(datas, args.executor)
            row = {"n": n, "method": "anchor pHash all-pairs H<=10", **_score(pred, truth), **times}
            row["peak_rss_mib"] = round(_peak_rss_mib())
            results.append(row)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
