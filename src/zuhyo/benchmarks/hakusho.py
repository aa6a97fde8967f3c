"""`hakusho` (HakushoBench) and `jgraphqa` (JGraphQA family): Japanese chart/table QA rows on the HF hub.

HakushoBench (HF ``llm-jp/HakushoBench``, split ``test``): ``question``, ``answer``, ``original_id`` and either an
embedded ``image`` (HF ``Image`` feature) or, in later revisions, ``image_url``. The default source pins revision
``41de46f6bbd418eb0c2a1041bcd810448b80e045``, the last one that embeds images (the authors' evaluation code,
llm-jp/simple-evals-mm ``tasks/hakushobench.py``, pins the same revision); ``--revision`` overrides it.

JGraphQA layouts: ``llm-jp/JGraphQA-Verified`` (default; split ``test``; image, question, answer, original_id),
``llm-jp/JGraphQA`` (split ``train``; image, question, answer, id) and ``r-g2-2024/JGraphQA`` (the original
release). The id is taken from the first column present of ``original_id``, ``id``, ``question_id``, else the row
index, so all three load with the same adapter.

Optional metadata columns, read when present: ``white_paper``, ``topic_group`` (HakushoBench Table 5 groups),
``image_type`` (Table 2 classes) and ``flags`` (Table 3; a list or a comma-separated string). Enum values are matched
ignoring case, spaces, hyphens, underscores and "&"/"and"; an unknown value is a RowError naming the column. Other
scalar columns are kept in ``Sample.metadata``.
"""

from __future__ import annotations

import re
import unicodedata
from enum import Enum
from typing import Any, TypeVar

from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, RowErrors, benchmark
from zuhyo.benchmarks.hf_source import Row, check_options, image_ref_from_cell, open_rows, reject_duplicate_ids
from zuhyo.schema import Flag, HakushoMeta, ImageRef, ImageType, Sample, TopicGroup

HAKUSHO_HF_ID = "llm-jp/HakushoBench"
HAKUSHO_EMBEDDED_REVISION = "41de46f6bbd418eb0c2a1041bcd810448b80e045"
JGRAPHQA_HF_ID = "llm-jp/JGraphQA-Verified"
ID_COLUMNS = ("original_id", "id", "question_id")
_USED = {"question", "answer", "image", "image_url", "white_paper", "topic_group", "image_type", "flags", *ID_COLUMNS}

E = TypeVar("E", bound=Enum)


def _enum_key(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("&", " ")
    text = re.sub(r"\band\b", " ", text)
    return re.sub(r"[^0-9a-z]", "", text)


def parse_enum(enum: type[E], value: str) -> E:
    """The member of ``enum`` whose value matches ``value`` up to case and punctuation; ``ValueError`` otherwise."""
    table = {_enum_key(m.value): m for m in enum}
    member = table.get(_enum_key(value))
    if member is None:
        raise ValueError(f"unknown value {value!r}; expected one of {', '.join(str(m.value) for m in enum)}")
    return member


def parse_flags(value: Any) -> list[Flag]:
    """Difficulty flags from a list of names or one string of names separated by , ; | or 、."""
    if isinstance(value, str):
        items = [p for p in re.split(r"[,;|、]", value) if p.strip()]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = value
    else:
        raise ValueError(f"expected a list of flag names or a comma-separated string, got {type(value).__name__}")
    flags: list[Flag] = []
    for item in items:
        flag = parse_enum(Flag, item)
        if flag not in flags:
            flags.append(flag)
    return flags


def _text(errors: RowErrors, rec: dict[str, Any], key: str, label: str) -> str | None:
    value = rec.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # numeric answers stored as numbers: the value is unambiguous
    if value is None:
        errors.add(label, "missing field", field=key)
        return None
    if not isinstance(value, str):
        errors.add(label, f"expected str, got {type(value).__name__}", field=key)
        return None
    if not value.strip():
        errors.add(label, "empty value", field=key)
        return None
    return value


def _row_id(rec: dict[str, Any], index: int) -> tuple[str, str | None]:
    """(sample id, the id column it came from or None when generated from the row index)."""
    for col in ID_COLUMNS:
        v = rec.get(col)
        if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip():
            return str(v).strip(), col
    return f"{index:04d}", None


def _image(errors: RowErrors, rec: dict[str, Any], label: str, base_dir: Any) -> tuple[bool, ImageRef | None]:
    """(ok, image): the embedded ``image`` and/or ``image_url``; (False, None) after recording a bad cell."""
    ref: ImageRef | None = None
    if rec.get("image") is not None:
        try:
            ref = image_ref_from_cell(rec["image"], base_dir)
        except ValueError as e:
            errors.add(label, str(e), field="image")
            return False, None
    url = rec.get("image_url")
    if url is not None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            errors.add(label, f"expected an http(s) URL, got {url!r}"[:200], field="image_url")
            return False, None
        ref = ImageRef(url=url) if ref is None else ref.model_copy(update={"url": url})
    return True, ref


def row_to_sample(row: Row, errors: RowErrors, name: str, split: str | None, base_dir: Any) -> Sample | None:
    """One HakushoBench/JGraphQA row as a sample, or None after recording the problem."""
    rec, label = row.record, row.label
    if not isinstance(rec, dict):
        errors.add(label, f"expected a row object, got {type(rec).__name__}")
        return None
    question = _text(errors, rec, "question", label)
    answer = _text(errors, rec, "answer", label) if question is not None else None
    if question is None or answer is None:
        return None
    ok, image = _image(errors, rec, label, base_dir)
    if not ok:
        return None
    sid, id_col = _row_id(rec, row.index)
    try:
        image_type = parse_enum(ImageType, rec["image_type"]) if rec.get("image_type") is not None else None
    except (ValueError, TypeError) as e:
        errors.add(label, str(e), field="image_type")
        return None
    try:
        topic = parse_enum(TopicGroup, rec["topic_group"]) if rec.get("topic_group") is not None else None
    except (ValueError, TypeError) as e:
        errors.add(label, str(e), field="topic_group")
        return None
    try:
        flags = parse_flags(rec["flags"]) if rec.get("flags") is not None else []
    except ValueError as e:
        errors.add(label, str(e), field="flags")
        return None
    white_paper = rec.get("white_paper")
    if white_paper is not None and not isinstance(white_paper, str):
        errors.add(label, f"expected str, got {type(white_paper).__name__}", field="white_paper")
        return None
    extra = {k: v for k, v in rec.items()
             if k not in _USED and v is not None and isinstance(v, (str, int, float, bool))}
    hakusho = None
    if name == "hakusho":
        hakusho = HakushoMeta(white_paper=white_paper, topic_group=topic,
                              original_id=sid if id_col == "original_id" else None)
    else:
        if white_paper is not None:
            extra["white_paper"] = white_paper
        if topic is not None:
            extra["topic_group"] = topic.value
        if id_col is not None:
            extra["id_column"] = id_col
    return Sample(id=sid, benchmark=name, question=question, answers=[answer], image=image, image_type=image_type,
                  flags=flags, split=split, hakusho=hakusho, metadata=extra)


def _load(name: str, source: BenchmarkSource, strict: bool, default_split: str) -> LoadResult:
    check_options(source, name, ())
    errors = RowErrors(name, strict)
    rows = open_rows(source, errors, default_split=default_split)
    samples = [s for r in rows.rows if (s := row_to_sample(r, errors, name, rows.split, rows.base_dir)) is not None]
    return LoadResult(name, reject_duplicate_ids(samples, errors), errors.errors, base_dir=rows.base_dir)


@benchmark("hakusho", "HakushoBench (HF llm-jp/HakushoBench, split test): Japanese white-paper charts/tables, "
                      "embedded image or image_url",
           default_source=lambda: BenchmarkSource(hf_id=HAKUSHO_HF_ID, revision=HAKUSHO_EMBEDDED_REVISION,
                                                  split="test"))
def load_hakusho(source: BenchmarkSource, strict: bool) -> LoadResult:
    """Load HakushoBench from an HF id, a save_to_disk folder, a folder of parquet/JSON files or one such file."""
    return _load("hakusho", source, strict, "test")


@benchmark("jgraphqa", "JGraphQA family (default HF llm-jp/JGraphQA-Verified, split test; also llm-jp/JGraphQA "
                       "split train and r-g2-2024/JGraphQA): Japanese IR-slide graphs",
           default_source=lambda: BenchmarkSource(hf_id=JGRAPHQA_HF_ID, split="test"))
def load_jgraphqa(source: BenchmarkSource, strict: bool) -> LoadResult:
    """Load a JGraphQA layout; the split defaults to ``test`` (``llm-jp/JGraphQA`` needs ``--split train``)."""
    return _load("jgraphqa", source, strict, "test")
