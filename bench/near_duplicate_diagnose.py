"""Where each planted pair of `bench/hard_corpus.py`'s corpus is decided (issue 22): for every copy and hard
negative and its original, whether the pair is a candidate (and the original's rank among the copy's
neighbours), its thumbnail score and solid difference, and its second look's largest region - so a miss can be
put down to one stage.

    python bench/near_duplicate_diagnose.py /tmp/zuhyo_hard_tune [--n 600] [--json out.json] [--misses]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any


def diagnose(corpus: Path, n: int | None) -> list[dict[str, Any]]:
    import numpy as np

    from zuhyo.construct.executor import map_items
    from zuhyo.construct.filter import near_duplicates as nd
    from zuhyo.construct.filter.feature_store import stack_features

    items = json.loads((corpus / "manifest.json").read_text())["items"][:n]
    datas = [(corpus / e["file"]).read_bytes() for e in items]
    feats = map_items(nd.image_features, datas, executor="local")
    arrays = stack_features(feats)
    cands = {tuple(p) for p in nd.near_duplicate_candidates(arrays).tolist()}
    planted = [(i, e["original"]) for i, e in enumerate(items) if e["role"] != "original"]
    pairs = np.array([(min(a, b), max(a, b)) for a, b in planted], dtype=np.int64)
    scores, solids = nd.score_pairs(arrays.thumbs, arrays.prepared, pairs, max_solid=None,
                                   refine_below=nd.DEFAULT_MIN_SCORE)
    regions = nd.region_scores(arrays.thumbs, arrays.prepared, pairs, datas, limit=None)
    toned = nd.tone_fails(scores, solids)
    out = []
    for k, (i, o) in enumerate(planted):
        e = items[i]
        stage = ("candidates" if tuple(pairs[k]) not in cands else
                 "tone" if toned[k] else
                 "thumbnail" if scores[k] < nd.DEFAULT_MIN_SCORE else
                 "region" if regions[k] > nd.MAX_REGION else "merged")
        out.append({"item": i, "original": o, "role": e["role"], "kind": e["kind"],
                    "transform": e.get("transform"), "candidate": tuple(pairs[k]) in cands,
                    "score": round(float(scores[k]), 3), "solid": int(solids[k]), "region": int(regions[k]),
                    "stage": stage})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("corpus", type=Path)
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--misses", action="store_true", help="list the copies not merged and the negatives merged")
    args = p.parse_args()
    rows = diagnose(args.corpus, args.n)
    for role in ("copy", "negative"):
        print(role, dict(Counter(r["stage"] for r in rows if r["role"] == role)))
    print("copies lost, by transform and stage:",
          dict(Counter((r["transform"], r["stage"]) for r in rows if r["role"] == "copy" and r["stage"] != "merged")))
    if args.misses:
        for r in rows:
            if (r["role"] == "copy") != (r["stage"] == "merged"):
                print(json.dumps(r))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
