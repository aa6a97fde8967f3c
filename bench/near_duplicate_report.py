"""Near-duplicate detection on `bench/hard_corpus.py`'s corpus (issue 22): recall, precision and hard negatives
merged, overall, for tuned and held-out kinds, per kind and per transform - zuhyo's filter and the imagehash
pHash all-pairs baseline in the same run.

zuhyo runs as ``zuhyo filter`` does (:mod:`zuhyo.construct.filter.near_duplicates` then
:func:`zuhyo.construct.filter.duplicate_groups.resolve_groups`, the largest image of a cluster kept). Its groups
are a kept image and the images dropped as its duplicates; its links are (dropped, kept). A copy is found when
its original is in its group; a hard negative is merged when its original is; a link is correct when both ends
show one figure (:func:`classes`: two hard negatives of one original can be one). The baseline's links are all
pairs within Hamming distance 10; a copy is found when the pair (copy, original) is among them.

A second table takes each copy and each hard negative of its original as a pair, with no original between them
(a user's folder may hold a resized copy of last year's chart and this year's with one number changed): the share
of such pairs each method verifies, per transform of the copy (:func:`copies_against_negatives`).

    python bench/near_duplicate_report.py /tmp/zuhyo_hard_heldout [--n 1000] [--min-score 0.86] [--json out.json]
    python bench/near_duplicate_report.py /tmp/hard_s23 /tmp/hard_s24 ...   (each, then pooled)
"""

from __future__ import annotations

import argparse
import inspect
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hard_corpus import TUNE_KINDS
from near_duplicates import _inspect_measured, _peak_rss_mib, run_anchor


def run_zuhyo(datas: list[bytes], executor: str, min_score: float | None, neighbours: int | None,
              star_clusters: bool = False, also: Sequence[tuple[int, int]] = ()
              ) -> tuple[list[list[int]], dict[str, Any], set[tuple[int, int]]]:
    """zuhyo's groups (kept first), timings and which of the pairs ``also`` verify (as the filter verifies a
    candidate pair, whether or not they are candidates); ``star_clusters``: the groups as the filter made them
    before issue 22 (each star cluster's best member kept, all others dropped), to measure an older tree."""
    from zuhyo.construct.executor import map_items
    from zuhyo.construct.filter import near_duplicates as nd
    from zuhyo.construct.filter.feature_store import stack_features
    from zuhyo.construct.filter.regions import LOSSY_FORMATS
    score = nd.DEFAULT_MIN_SCORE if min_score is None else min_score
    t0 = time.perf_counter()
    measured = map_items(_inspect_measured, datas, executor=executor)
    feats = [m[0] for m in measured]
    worker_peak = max(m[1] for m in measured)
    del measured
    t1 = time.perf_counter()
    arrays = stack_features(feats)
    # the stage's ranking of cluster members: the most content first, then the least around it
    # (an older tree's best_first may not take lossy)
    lossy_first = "lossy" in inspect.signature(nd.best_first).parameters
    area = [nd.best_first(f.width, f.height, f.content_area, f.format in LOSSY_FORMATS) if lossy_first
            else nd.best_first(f.width, f.height, f.content_area) for f in feats]
    del feats
    kwargs = {} if neighbours is None else {"neighbours": neighbours}
    cands = nd.near_duplicate_candidates(arrays, **kwargs)
    t2 = time.perf_counter()
    images = datas.__getitem__  # the second look reads each pair's images again
    pairs = nd.verified_pairs(arrays, cands, score, executor=executor, images=images)
    t3 = time.perf_counter()
    order = sorted(range(len(area)), key=lambda i: (area[i], i))
    rank = [0] * len(area)
    for k, i in enumerate(order):
        rank[i] = k
    if star_clusters:  # as the filter did before issue 22: the best member kept, every other member dropped
        groups = [sorted(g, key=lambda i: rank[i]) for g in nd.clusters(len(datas), pairs)]
    else:
        from zuhyo.construct.filter.duplicate_groups import resolve_groups

        resolved = resolve_groups(len(datas), pairs, rank,
                                  lambda todo: nd.verify_scores(arrays, todo, score, images), score)
        groups = [[links[0].kept] + [link.dropped for link in links] for links in resolved]
    t4 = time.perf_counter()
    verified_also = {(p.i, p.j) for p in nd.verified_pairs(arrays, list(also), score, executor=executor,
                                                           images=images)} if also else set()
    return groups, {"hash_s": round(t1 - t0, 2), "candidates_s": round(t2 - t1, 2), "verify_s": round(t3 - t2, 2),
                    "resolve_s": round(t4 - t3, 2), "total_s": round(t4 - t0, 2), "candidates": len(cands),
                    "verified": len(pairs), "peak_rss_workers_mib": round(worker_peak)}, verified_also


def copies_against_negatives(items: list[dict[str, Any]], cls: list[int]) -> list[tuple[int, int]]:
    """(low, high) index pairs of each copy and each hard negative of its original (other figures: ``cls``,
    :func:`classes`). In the corpus the original is always there, and a negative joins a group only through it; a
    user's folder may hold a copy of last year's chart (resized, recompressed, drawn again) and this year's with
    one number changed, without the original. Measured pair by pair: is the pair verified?"""
    negatives: dict[int, list[int]] = defaultdict(list)
    for i, e in enumerate(items):
        if e["role"] == "negative":
            negatives[e["original"]].append(i)
    return sorted((min(c, n), max(c, n)) for c, e in enumerate(items) if e["role"] == "copy"
                  for n in negatives.get(e["original"], []) if cls[c] != cls[n])


def against_negatives(items: list[dict[str, Any]], pairs: list[tuple[int, int]], verified: Any) -> dict[str, Any]:
    """Of :func:`copies_against_negatives`' ``pairs``, those ``verified(a, b)``: in all, per transform of the
    copy, and the hard negatives verified with at least one copy of their original."""
    by: dict[str, list[int]] = defaultdict(list)
    negatives: dict[int, int] = {}
    for a, b in pairs:
        copy, negative = (a, b) if items[a]["role"] == "copy" else (b, a)
        hit = int(bool(verified(a, b)))
        by["all"].append(hit)
        by[f"transform {items[copy]['transform']}"].append(hit)
        negatives[negative] = max(negatives.get(negative, 0), hit)
    out: dict[str, Any] = {k: {"pairs": len(v), "verified": sum(v)} for k, v in sorted(by.items())}
    out["negatives"] = {"negatives": len(negatives), "verified with a copy": sum(negatives.values())}
    return out


def classes(items: list[dict[str, Any]], datas: list[bytes]) -> list[int]:
    """The figure each item shows: a copy its original's, a hard negative its own - but two negatives of one
    original with the same change are one figure (a one-series line chart has one series to reverse, and its
    negatives render to identical bytes): a link between them is correct."""
    import hashlib

    first: dict[tuple[int, str], int] = {}
    out = []
    for i, e in enumerate(items):
        if e["role"] != "negative":
            out.append(e.get("original", i))
            continue
        key = (e["original"], hashlib.sha256(datas[i]).hexdigest())
        out.append(-1 - first.setdefault(key, i))
    return out


def evaluate(items: list[dict[str, Any]], cls: list[int], found: Any, links: list[tuple[int, int]]) -> dict[str, Any]:
    """Scores of one method: ``cls`` (:func:`classes`) the figure each item shows, ``found(a, b)`` whether items
    ``a`` and ``b`` were joined; ``links`` are its predicted pairs."""
    correct = sum(1 for a, b in links if cls[a] == cls[b])
    by: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, e in enumerate(items):
        if e["role"] == "original":
            continue
        hit = int(found(i, e["original"]))
        split = "tuned kinds" if e["kind"] in TUNE_KINDS else "held-out kinds"
        for key in ("all", split, f"kind {e['kind']}", *([f"transform {e['transform']}"] if "transform" in e else [])):
            by[key][e["role"]].append(hit)
    return rates({"links": len(links), "correct": correct,
                  **{key: {"copies": len(roles.get("copy", [])), "found": sum(roles.get("copy", [])),
                           "negatives": len(roles.get("negative", [])), "merged": sum(roles.get("negative", []))}
                     for key, roles in sorted(by.items())}})


def rates(counts: dict[str, Any]) -> dict[str, Any]:
    """``counts`` (:func:`evaluate`'s, or several corpora's summed: :func:`pooled`) with precision, recall and the
    share of negatives merged."""
    out: dict[str, Any] = {"links": counts["links"], "correct": counts["correct"],
                           "precision": round(counts["correct"] / counts["links"], 4) if counts["links"] else 1.0}
    for key, c in counts.items():
        if isinstance(c, dict):
            out[key] = {**c, "recall": round(c["found"] / c["copies"], 3) if c["copies"] else None,
                        "negatives_merged": round(c["merged"] / c["negatives"], 3) if c["negatives"] else None}
    return out


def pooled(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Several corpora's results (:func:`report` of each) as one: every count summed, the rates of the sums."""
    out: dict[str, Any] = {"corpus": [r["corpus"] for r in results], "n": sum(r["n"] for r in results)}
    for method in [m for m in results[0] if isinstance(results[0][m], dict)]:
        counts: dict[str, Any] = {"links": 0, "correct": 0}
        against: dict[str, dict[str, int]] = {}
        for r in results:
            m = r[method]
            counts["links"] += m["links"]
            counts["correct"] += m["correct"]
            for key, v in m.items():
                if isinstance(v, dict) and key != "against copies":
                    c = counts.setdefault(key, {"copies": 0, "found": 0, "negatives": 0, "merged": 0})
                    for f in c:
                        c[f] += v[f]
            for key, v in m.get("against copies", {}).items():
                a = against.setdefault(key, dict.fromkeys(v, 0))
                for f in v:
                    a[f] += v[f]
        out[method] = {**rates(counts), **({"against copies": against} if against else {})}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("corpus", type=Path, nargs="+", help="folder(s) made by bench/hard_corpus.py; with several, each "
                   "is reported and then all of them pooled (counts summed)")
    p.add_argument("--n", type=int, default=None, help="the first N items (all by default)")
    p.add_argument("--executor", default="local")
    p.add_argument("--min-score", type=float, default=None)
    p.add_argument("--neighbours", type=int, default=None)
    p.add_argument("--no-anchor", action="store_true")
    p.add_argument("--star-clusters", action="store_true", help="group as the filter did before issue 22 (to "
                   "measure an older tree: PYTHONPATH=/path/to/old/src)")
    p.add_argument("--json", type=Path, default=None, help="write the full result here")
    p.add_argument("--list", action="store_true", help="also list zuhyo's false links and the copies it did not "
                   "join to their original, each with its group (the items' roles, kinds and transforms)")
    args = p.parse_args()
    results = [report(corpus, args) for corpus in args.corpus]
    for result in results:
        if len(results) > 1:
            print(f"\n## {result['corpus']}\n")
        print(json.dumps({k: v for k, v in result["zuhyo"].items() if not isinstance(v, dict)}))
        print(markdown(result))
        print()
        print(against_markdown(result))
        if args.list:
            print("\n".join(result.pop("mistakes")))
    out: dict[str, Any] = results[0]
    if len(results) > 1:
        out = {"corpora": results, "pooled": pooled(results)}
        print(f"\n## pooled: {len(results)} corpora, {out['pooled']['n']} items\n")
        print(markdown(out["pooled"]))
        print()
        print(against_markdown(out["pooled"]))
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1))


def report(corpus: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One corpus: zuhyo's and (unless ``--no-anchor``) the baseline's :func:`evaluate`, with the pairs of
    :func:`copies_against_negatives`."""
    items = json.loads((corpus / "manifest.json").read_text())["items"][:args.n]
    datas = [(corpus / e["file"]).read_bytes() for e in items]
    result: dict[str, Any] = {"corpus": str(corpus), "n": len(items)}
    cls = classes(items, datas)
    cross = copies_against_negatives(items, cls)
    groups, times, cross_verified = run_zuhyo(datas, args.executor, args.min_score, args.neighbours,
                                              args.star_clusters, cross)
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    links = [(m, g[0]) for g in groups for m in g[1:]]

    def joined(a: int, b: int) -> bool:
        return a in group_of and group_of.get(b) == group_of[a]

    zuhyo = evaluate(items, cls, joined, links)
    result["zuhyo"] = {**zuhyo, **times, "peak_rss_driver_mib": round(_peak_rss_mib()),
                       "against copies": against_negatives(items, cross, lambda a, b: (a, b) in cross_verified)}
    if not args.no_anchor:
        pred, anchor_times = run_anchor(datas, args.executor)
        result["anchor pHash H<=10"] = {**evaluate(items, cls, lambda a, b: (min(a, b), max(a, b)) in pred,
                                                   sorted(pred)), **anchor_times,
                                        "against copies": against_negatives(items, cross, lambda a, b: (a, b) in pred)}
    if args.list:
        result["mistakes"] = mistakes(items, cls, links, joined,
                                      lambda i: groups[group_of[i]] if i in group_of else None)
    return result


def mistakes(items: list[dict[str, Any]], cls: list[int], links: list[tuple[int, int]], joined: Any,
             group: Any) -> list[str]:
    """One line per false link (dropped, kept) of ``links`` and per copy not ``joined`` to its original, with
    ``group(i)``, the group item ``i`` is in (kept first; ``None``) - what to look at when a figure moves."""

    def named(i: int) -> str:
        e = items[i]
        return f"{i} ({e['role']} {e['kind']}{' ' + e['transform'] if 'transform' in e else ''})"

    out = [f"false link: {named(m)} dropped for {named(k)}; group {group(k)}" for m, k in links if cls[m] != cls[k]]
    out += [f"copy not joined: {named(i)} of {e['original']}; its group {group(i)}, the original's "
            f"{group(e['original'])}"
            for i, e in enumerate(items) if e["role"] == "copy" and not joined(i, e["original"])]
    return out


def markdown(result: dict[str, Any]) -> str:
    methods = [m for m in result if isinstance(result[m], dict)]
    keys = sorted({k for m in methods for k, v in result[m].items() if isinstance(v, dict) and k != "against copies"},
                  key=lambda k: (k.split()[0] not in ("all", "tuned", "held-out"), k))
    head = "| slice | " + " | ".join(f"{m} recall | {m} negatives merged" for m in methods) + " | copies / negatives |"
    rows = [head, "|---|" + "---:|" * (2 * len(methods) + 1)]
    for k in keys:
        cells = []
        for m in methods:
            v = result[m].get(k, {})
            cells += [str(v.get("recall")), str(v.get("negatives_merged"))]
        any_v = result[methods[0]].get(k, {})
        rows.append(f"| {k} | " + " | ".join(cells) + f" | {any_v.get('copies')} / {any_v.get('negatives')} |")
    rows.append("| precision (links) | " + " | ".join(f"{result[m]['precision']} ({result[m]['links']} links) | "
                                                     for m in methods) + " |")
    return "\n".join(rows)


def against_markdown(result: dict[str, Any]) -> str:
    """The pairs of a copy and a hard negative of its original verified (:func:`against_negatives`), per method."""
    methods = [m for m in result if isinstance(result[m], dict) and "against copies" in result[m]]
    rows = ["| copy against a hard negative of its original | " + " | ".join(f"{m} verified" for m in methods)
            + " | pairs |", "|---|" + "---:|" * (len(methods) + 1)]
    first = result[methods[0]]["against copies"]
    for k in [k for k in first if k != "negatives"]:
        cells = [f"{result[m]['against copies'][k]['verified'] / max(1, first[k]['pairs']):.3f}" for m in methods]
        rows.append(f"| {k} | " + " | ".join(cells) + f" | {first[k]['pairs']} |")
    neg = first["negatives"]
    cells = [f"{result[m]['against copies']['negatives']['verified with a copy'] / max(1, neg['negatives']):.3f}"
             for m in methods]
    rows.append("| hard negatives verified with a copy of their original | " + " | ".join(cells)
                + f" | {neg['negatives']} negatives |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
