"""Counts and field coverage of a loaded benchmark (`zuhyo bench info`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from zuhyo.benchmarks.base import LoadResult

_OPTIONAL_FIELDS = ("image", "context", "image_type", "flags", "split", "source", "hakusho", "astro",
                    "chartqapro", "charxiv")


def benchmark_info(result: LoadResult) -> dict[str, Any]:
    """Summary of a load: counts, per-field coverage (share of samples with the field set), breakdowns, errors."""
    samples = result.samples
    n = len(samples)
    coverage = {}
    for f in _OPTIONAL_FIELDS:
        have = sum(1 for s in samples if getattr(s, f) not in (None, [], {}))
        coverage[f] = round(have / n, 4) if n else 0.0
    missing = result.missing_images()
    info: dict[str, Any] = {
        "benchmark": result.benchmark,
        "samples": n,
        "field_coverage": coverage,
        "image_types": dict(Counter(s.image_type.value for s in samples if s.image_type)),
        "flags": dict(Counter(f.value for s in samples for f in s.flags)),
        "splits": dict(Counter(s.split for s in samples if s.split)),
        "images_missing": len(missing),
        "images_by_kind": dict(Counter(_image_kind(s) for s in samples)),
        "errors": len(result.errors),
        "error_examples": [str(e) for e in result.errors[:20]],
        "missing_image_examples": [str(e) for e in missing[:5]],
    }
    astro = [s.astro for s in samples if s.astro]
    if astro:
        info["astro_categories"] = dict(Counter(a.category.value for a in astro))
        info["astro_aspects"] = dict(Counter(a.aspect.value for a in astro if a.aspect))
        info["astro_qa_types"] = dict(Counter(a.qa_type.value for a in astro))
    cxv = [s.charxiv for s in samples if s.charxiv]
    if cxv:
        info["charxiv_kinds"] = dict(Counter(c.kind for c in cxv))
    return info


def _image_kind(s: Any) -> str:
    img = s.image
    if img is None:
        return "none"
    if img.data is not None:
        return "embedded"
    if img.path is not None:
        return "path"
    return "url"
