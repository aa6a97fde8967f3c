"""The exported shards as the Hugging Face Hub's dataset viewer shows them.

Each shard holds zuhyo's flat sample form (:data:`zuhyo.schema.FLAT_COLUMNS`, which ``zuhyo eval --bench local``
reads back exactly through ``meta_json``) with two changes for people browsing it:

- the image is a ``datasets.Image`` column ``image`` (``{bytes, path}``, the feature recorded in the Parquet
  schema's ``huggingface`` metadata), in place of a raw ``image_bytes`` column the viewer cannot show;
- what a reader filters on is a real column beside ``meta_json``: :data:`HUB_COLUMNS` (image type, difficulty flags,
  DomainCQA QA type, category, aspect and CCV, the source's title, URL and licence), and ``provenance``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zuhyo.schema import Sample, sample_to_flat

#: The columns added beside the flat form, with what each holds (the card lists them).
HUB_COLUMNS = (
    ("image_type", "the image type (HakushoBench's 11 classes), when labelled"),
    ("flags", "HakushoBench difficulty flags of the question (hakusho style)"),
    ("qa_type", "DomainCQA FQA or AQA (astro style)"),
    ("category", "DomainCQA category: Visual, Data, Inference, Summary, KB-Inference, KB-Summary (astro style)"),
    ("aspect", "DomainCQA aspect: Color, Style, Text, Layout, Point, Interval, Calculation (astro style)"),
    ("ccv", "the chart's 10-attribute Chart Complexity Vector (DomainCQA Table 3), 0/1 each"),
    ("ccv_score", "the CCV's complexity score: attributes set, 0-10"),
    ("source_title", "the source document's title (white paper, arXiv paper, PDF, folder)"),
    ("source_url", "the page or paper the figure came from"),
    ("source_license", "the source's licence, as recorded or given with --source-license"),
)


def hub_row(sample: Sample, provenance: str) -> dict[str, Any]:
    """One shard row of ``sample`` (module doc)."""
    flat = sample_to_flat(sample)
    data = flat.pop("image_bytes")
    flat["image"] = {"bytes": data, "path": None} if data is not None else None
    astro, source = sample.astro, sample.source
    ccv = list(astro.ccv) if astro is not None and astro.ccv is not None else None
    flat.update(
        image_type=sample.image_type.value if sample.image_type is not None else None,
        flags=[f.value for f in sample.flags],
        qa_type=str(astro.qa_type.value) if astro is not None else None,
        category=str(astro.category.value) if astro is not None else None,
        aspect=str(astro.aspect.value) if astro is not None and astro.aspect is not None else None,
        ccv=ccv, ccv_score=sum(ccv) if ccv is not None else None,
        source_title=source.title if source else None, source_url=source.url if source else None,
        source_license=source.license if source else None, provenance=provenance)
    return flat


def hub_features() -> Any:
    """The shards' ``datasets.Features`` (the image as ``datasets.Image``)."""
    from datasets import Features, Image, Value

    try:
        from datasets import List  # datasets >= 4
    except ImportError:  # datasets 2.x-3.x
        from datasets import Sequence as List  # type: ignore[assignment]
    text = Value("string")
    return Features({
        "id": text, "benchmark": text, "question": text, "answers": List(text), "image": Image(),
        "image_path": text, "image_url": text, "image_sha256": text, "image_width": Value("int64"),
        "image_height": Value("int64"), "image_mime": text, "meta_json": text,
        "image_type": text, "flags": List(text), "qa_type": text, "category": text, "aspect": text,
        "ccv": List(Value("int8")), "ccv_score": Value("int8"), "source_title": text, "source_url": text,
        "source_license": text, "provenance": text,
    })


def write_hub_parquet(samples: list[Sample], provenance: list[dict[str, Any]], path: Path) -> None:
    """Write one shard: :func:`hub_row` per sample, the schema of :func:`hub_features` (with its metadata)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [hub_row(s, json.dumps(p, ensure_ascii=False)) for s, p in zip(samples, provenance, strict=True)]
    pq.write_table(pa.Table.from_pylist(rows, schema=hub_features().arrow_schema), path)
