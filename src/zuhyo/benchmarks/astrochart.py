"""`astrochart`: DomainCQA / AstroChart QA items from JSON, JSONL, CSV or Parquet files, with a field mapping.

Each row is one QA item. Logical fields and the column read by default (rename with ``--option field.X=COLUMN``):
``id``, ``image`` (path relative to the file, ``--option images=DIR``, URL, base64 or bytes), ``question``,
``answer`` (text, number or list of references), ``qa_type`` (FQA/AQA; derived from the category when absent),
``category``, ``aspect``, ``answer_kind`` (numeric_retrieval, numeric_exact, open, choice; when absent the judge
derives it from category/aspect: Data/Point and Data/Interval → numeric_retrieval, Data/Calculation and counting
questions → numeric_exact, the rest → open; DomainCQA §5.1, Appendix G; see ``evaluate/judges/astro_routing.py``),
``axis_min``, ``axis_max``, ``log_scale``, ``key_points`` (list, JSON list or ``;``-separated), ``ccv`` (10 binary
values), ``paper_id``, ``caption``.

Categories and aspects are those of DomainCQA Table 1 (:class:`~zuhyo.schema.AstroCategory`,
:class:`~zuhyo.schema.AstroAspect`): Visual {Color, Style, Text, Layout}, Data {Point, Interval, Calculation},
Inference, Summary, KB-Inference, KB-Summary. Common spellings are accepted ("KB Inference", "kb-inference",
"knowledge-based summary"; a category of "data point" or "Visual/Color" sets the aspect too). Anything else, or
an aspect that does not belong to the category, is a RowError naming the row and the column.

``--path`` is a file or a folder of such files (each read on its own, so a bad line names its file); ``--hf`` reads
an HF dataset with the same mapping. Missing ids become ``<file stem>/<row index>``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zuhyo.benchmarks import hf_source as tables
from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, RowErrors, benchmark
from zuhyo.benchmarks.hf_source import Row
from zuhyo.errors import DataError
from zuhyo.schema import AstroAspect, AstroCategory, AstroMeta, AstroQAType, ImageRef, Sample, SourceInfo

FIELDS = ("id", "image", "question", "answer", "qa_type", "category", "aspect", "answer_kind", "axis_min",
          "axis_max", "log_scale", "key_points", "ccv", "paper_id", "caption")

_CATEGORY_KEYS: dict[str, AstroCategory] = {
    "visual": AstroCategory.VISUAL, "data": AstroCategory.DATA, "inference": AstroCategory.INFERENCE,
    "summary": AstroCategory.SUMMARY, "kbinference": AstroCategory.KB_INFERENCE,
    "knowledgeinference": AstroCategory.KB_INFERENCE, "knowledgebasedinference": AstroCategory.KB_INFERENCE,
    "kbsummary": AstroCategory.KB_SUMMARY, "knowledgesummary": AstroCategory.KB_SUMMARY,
    "knowledgebasedsummary": AstroCategory.KB_SUMMARY,
}
_ASPECT_KEYS: dict[str, AstroAspect] = {
    "color": AstroAspect.COLOR, "colour": AstroAspect.COLOR, "style": AstroAspect.STYLE, "text": AstroAspect.TEXT,
    "layout": AstroAspect.LAYOUT, "point": AstroAspect.POINT, "interval": AstroAspect.INTERVAL,
    "calculation": AstroAspect.CALCULATION, "calc": AstroAspect.CALCULATION,
}
_ANSWER_KINDS = {
    "numericretrieval": "numeric_retrieval", "retrieval": "numeric_retrieval", "dataretrieval": "numeric_retrieval",
    "numericexact": "numeric_exact", "exact": "numeric_exact", "derivation": "numeric_exact",
    "numericderivation": "numeric_exact", "dataderivation": "numeric_exact",
    "open": "open", "openended": "open", "keypoints": "open", "choice": "choice", "multiplechoice": "choice",
}
_TRUE = {"true", "yes", "1", "log", "logarithmic", "y", "t"}
_FALSE = {"false", "no", "0", "linear", "lin", "n", "f"}


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", unicodedata.normalize("NFKC", text).lower())


def parse_category(text: str) -> tuple[AstroCategory, AstroAspect | None]:
    """(category, aspect implied by the spelling or None) for a category cell; ``ValueError`` when unknown."""
    k = _key(text)
    if k in _CATEGORY_KEYS:
        return _CATEGORY_KEYS[k], None
    for prefix, cat in (("visual", AstroCategory.VISUAL), ("data", AstroCategory.DATA)):
        if k.startswith(prefix) and k[len(prefix):] in _ASPECT_KEYS:  # "data point", "Visual/Color"
            return cat, _ASPECT_KEYS[k[len(prefix):]]
    known = ", ".join(c.value for c in AstroCategory)
    raise ValueError(f"unknown category {text!r}; expected one of {known} (or e.g. 'Data Point')")


def parse_aspect(text: str) -> AstroAspect:
    """The aspect for an aspect cell ("Point", "data point", "colour"); ``ValueError`` when unknown."""
    k = _key(text)
    for prefix in ("", "visual", "data"):
        if k.startswith(prefix) and k[len(prefix):] in _ASPECT_KEYS:
            return _ASPECT_KEYS[k[len(prefix):]]
    raise ValueError(f"unknown aspect {text!r}; expected one of {', '.join(a.value for a in AstroAspect)}")


def _float(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, got {value!r}") from None


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"expected true/false (or log/linear), got {value!r}")


def _str_list(value: Any, sep: str = ";") -> list[str]:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as e:
                raise ValueError(f"looks like a JSON list but is not valid JSON: {e.msg}") from None
        else:
            return [p.strip() for p in text.split(sep) if p.strip()]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return [str(v) for v in value]
    raise ValueError(f"expected a list of strings, got {type(value).__name__}")


def _ccv(value: Any) -> list[int]:
    if isinstance(value, str) and re.fullmatch(r"[01]{10}", value.strip()):
        return [int(c) for c in value.strip()]
    items = _str_list(value, sep=",")
    if not all(i.strip() in ("0", "1") for i in items):
        raise ValueError(f"expected 10 binary values, got {value!r}")
    return [int(i) for i in items]


def _validation_field(message: str) -> str:
    """The logical field an :class:`AstroMeta` consistency error is about (to name the source column)."""
    if message.startswith("aspect "):
        return "aspect"
    if message.startswith("category "):  # the category does not belong to the given qa_type
        return "qa_type"
    if "axis_min" in message:
        return "axis_min"
    if message.startswith("ccv"):
        return "ccv"
    return "category"


class _Mapping:
    """Logical field → source column, from the defaults and ``field.X=COLUMN`` options."""

    def __init__(self, options: dict[str, str]) -> None:
        self.columns = {f: f for f in FIELDS}
        for key, col in options.items():
            if key.startswith("field."):
                name = key[len("field."):]
                if name not in FIELDS:
                    raise DataError(f"astrochart: unknown field {name!r} in option {key}; fields: {', '.join(FIELDS)}")
                self.columns[name] = col

    def get(self, rec: dict[str, Any], name: str) -> Any:
        value = rec.get(self.columns[name])
        return None if isinstance(value, str) and not value.strip() else value


def row_to_sample(row: Row, m: _Mapping, errors: RowErrors, id_prefix: str, base_dir: Path | None) -> Sample | None:
    """One AstroChart row as a sample, or None after recording the first problem (row and source column)."""
    rec, label, col = row.record, row.label, m.columns
    if not isinstance(rec, dict):
        errors.add(label, f"expected a row object, got {type(rec).__name__}")
        return None
    field = "question"
    try:
        question = m.get(rec, "question")
        if not isinstance(question, str):
            raise ValueError("missing field" if question is None else f"expected str, got {type(question).__name__}")
        field = "answer"
        raw_answer = m.get(rec, "answer")
        if raw_answer is None:
            raise ValueError("missing field")
        answers = _str_list(raw_answer) if isinstance(raw_answer, list) else (
            [str(raw_answer)] if isinstance(raw_answer, (str, int, float)) and not isinstance(raw_answer, bool)
            else None)
        if not answers or not all(a.strip() for a in answers):
            raise ValueError(f"expected a non-empty text, number or list of texts, got {raw_answer!r}")
        field = "category"
        raw_cat = m.get(rec, "category")
        if not isinstance(raw_cat, str):
            raise ValueError("missing field" if raw_cat is None else f"expected str, got {type(raw_cat).__name__}")
        category, implied_aspect = parse_category(raw_cat)
        field = "aspect"
        raw_aspect = m.get(rec, "aspect")
        aspect = parse_aspect(str(raw_aspect)) if raw_aspect is not None else implied_aspect
        if implied_aspect is not None and aspect is not None and aspect is not implied_aspect:
            raise ValueError(f"aspect {aspect.value} contradicts category {raw_cat!r}")
        field = "qa_type"
        raw_type = m.get(rec, "qa_type")
        if raw_type is None:
            qa_type = AstroQAType.AQA if category.value.startswith("KB-") else AstroQAType.FQA
        elif isinstance(raw_type, str) and raw_type.strip().upper() in ("FQA", "AQA"):
            qa_type = AstroQAType(raw_type.strip().upper())
        else:
            raise ValueError(f"expected FQA or AQA, got {raw_type!r}")
        field = "answer_kind"
        raw_kind = m.get(rec, "answer_kind")
        kind = None if raw_kind is None else _ANSWER_KINDS.get(_key(str(raw_kind)))
        if raw_kind is not None and kind is None:
            raise ValueError(f"unknown answer kind {raw_kind!r}; expected numeric_retrieval, numeric_exact, open "
                             "or choice")
        field = "axis_min"
        axis_min = None if m.get(rec, "axis_min") is None else _float(m.get(rec, "axis_min"))
        field = "axis_max"
        axis_max = None if m.get(rec, "axis_max") is None else _float(m.get(rec, "axis_max"))
        field = "log_scale"
        log_scale = False if m.get(rec, "log_scale") is None else _bool(m.get(rec, "log_scale"))
        field = "key_points"
        key_points = [] if m.get(rec, "key_points") is None else _str_list(m.get(rec, "key_points"))
        field = "ccv"
        ccv = None if m.get(rec, "ccv") is None else _ccv(m.get(rec, "ccv"))
        field = "image"
        image: ImageRef | None = None
        if m.get(rec, "image") is not None:
            image = tables.image_ref_from_cell(m.get(rec, "image"), base_dir)
        meta = AstroMeta(qa_type=qa_type, category=category, aspect=aspect, answer_kind=kind,  # type: ignore[arg-type]
                         axis_min=axis_min, axis_max=axis_max, log_scale=log_scale, key_points=key_points, ccv=ccv)
    except ValidationError as e:
        msg = e.errors()[0].get("msg", str(e)).removeprefix("Value error, ")
        errors.add(label, msg, field=col[_validation_field(msg)])
        return None
    except ValueError as e:
        errors.add(label, str(e), field=col[field])
        return None
    rid = m.get(rec, "id")
    has_id = isinstance(rid, (str, int)) and not isinstance(rid, bool)
    sid = str(rid).strip() if has_id else f"{id_prefix}{row.index:04d}"
    paper, caption = m.get(rec, "paper_id"), m.get(rec, "caption")
    provenance = None
    if paper is not None or caption is not None:
        provenance = SourceInfo(paper_id=str(paper) if paper is not None else None,
                                caption=str(caption) if caption is not None else None)
    return Sample(id=sid, benchmark="astrochart", question=question, answers=answers, image=image, astro=meta,
                  source=provenance)


@benchmark("astrochart", "DomainCQA/AstroChart QA rows (JSON/JSONL/CSV/Parquet) with a configurable field mapping "
                         "(--option field.question=COL ...)")
def load_astrochart(source: BenchmarkSource, strict: bool) -> LoadResult:
    """Load AstroChart items from ``--path`` (file or folder of table files) or ``--hf``."""
    tables.check_options(source, "astrochart", ("images",), prefixes=("field.",))
    mapping = _Mapping(source.options)
    errors = RowErrors("astrochart", strict)
    samples: list[Sample] = []
    base: Path | None
    if source.path is not None:
        path = source.path
        files = [path] if path.is_file() else sorted(
            p for p in path.iterdir() if p.suffix.lower() in tables.TABLE_SUFFIXES)
        if not files:
            raise DataError(f"astrochart: no {'/'.join(tables.TABLE_SUFFIXES)} files in {path}")
        base = path.parent if path.is_file() else path
        if "images" in source.options:
            base = Path(source.options["images"])
        for f in files:
            prefix = f"{f.stem}/" if len(files) > 1 else ""
            for r in tables.read_table_file(f, errors):
                s = row_to_sample(r, mapping, errors, prefix, base)
                if s is not None:
                    samples.append(s)
    else:
        rows = tables.open_rows(source, errors)
        base = Path(source.options["images"]) if "images" in source.options else rows.base_dir
        samples = [s for r in rows.rows if (s := row_to_sample(r, mapping, errors, "", base)) is not None]
    return LoadResult("astrochart", tables.reject_duplicate_ids(samples, errors), errors.errors, base_dir=base)
