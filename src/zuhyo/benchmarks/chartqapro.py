"""`chartqapro`: ChartQAPro (vis-nlp/ChartQAPro; HF ``ahmed-masry/ChartQAPro``, split test).

Row shape (HF dataset and the official scorer ``evaluate_predictions.py``): ``Question`` (list of the turns'
questions), ``Answer`` (list of the turns' answers), ``Question Type`` (Factoid, Multi Choice, Conversational,
Hypothetical, Fact Checking), ``Year`` (list of "YES"/"NO", per answer element: is it a year), ``image`` (encoded
bytes; also accepted: base64, a data URI, a URL or a path) and an optional ``Paragraph`` of context text.

The official scorer grades ``Answer[-1]`` only, so the last turn becomes the graded question and answer and the
earlier turns become :attr:`~zuhyo.schema.Sample.context`. ``Question Type`` and ``Year`` go to
:class:`~zuhyo.schema.ChartQAProMeta` for the scorer; ``Paragraph`` to ``source.context``.

Sources: ``--hf ahmed-masry/ChartQAPro`` (default; ``--revision`` to pin), a local parquet / JSON / JSONL file, a
folder of such files or an HF ``save_to_disk`` folder. Ids: the row's ``id`` column when present, else the row
index (``0007``), stable for a given file or split.
"""

from __future__ import annotations

from typing import Any

from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, RowErrors, benchmark
from zuhyo.benchmarks.hf_source import Row, check_options, image_ref_from_cell, open_rows, reject_duplicate_ids
from zuhyo.schema import ChartQAProMeta, ImageRef, Sample, SourceInfo, Turn

HF_ID = "ahmed-masry/ChartQAPro"
QUESTION_TYPES = ("Factoid", "Multi Choice", "Conversational", "Hypothetical", "Fact Checking")


def _str_list(errors: RowErrors, rec: dict[str, Any], key: str, row: str) -> list[str] | None:
    """A list of strings (a bare string counts as a one-element list); anything else is a RowError."""
    value = rec.get(key)
    if value is None:
        errors.add(row, "missing field", field=key)
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        errors.add(row, f"expected a non-empty list of strings, got {type(value).__name__}", field=key)
        return None
    for i, item in enumerate(value):
        if not isinstance(item, str):
            errors.add(row, f"expected str, got {type(item).__name__}", field=f"{key}[{i}]")
            return None
    return value


def row_to_sample(row: Row, errors: RowErrors, split: str | None, base_dir: Any) -> Sample | None:
    """One ChartQAPro row as a sample (last turn graded), or None after recording what is wrong with it."""
    rec, label = row.record, row.label
    if not isinstance(rec, dict):
        errors.add(label, f"expected a row object, got {type(rec).__name__}")
        return None
    questions = _str_list(errors, rec, "Question", label)
    answers = _str_list(errors, rec, "Answer", label) if questions is not None else None
    years = _str_list(errors, rec, "Year", label) if answers is not None else None
    qtype = errors.require(rec, "Question Type", label) if years is not None else None
    if questions is None or answers is None or years is None or qtype is None:
        return None
    if len(questions) != len(answers):
        errors.add(label, f"{len(answers)} answers for {len(questions)} questions: turns cannot be paired",
                   field="Answer")
        return None
    if qtype not in QUESTION_TYPES:
        errors.add(label, f"unknown question type {qtype!r} (expected one of {', '.join(QUESTION_TYPES)})",
                   field="Question Type")
        return None
    flags = [y.strip().upper() for y in years]
    bad = [y for y in flags if y not in ("YES", "NO")]
    if bad:
        errors.add(label, f"Year flags must be YES or NO, got {bad[0]!r}", field="Year")
        return None
    if not questions[-1].strip() or not answers[-1].strip():
        errors.add(label, "the graded (last) turn has an empty question or answer", field="Question")
        return None
    image: ImageRef | None = None
    if rec.get("image") is not None:
        try:
            image = image_ref_from_cell(rec["image"], base_dir)
        except ValueError as e:
            errors.add(label, str(e), field="image")
            return None
    paragraph = rec.get("Paragraph")
    if paragraph is not None and not isinstance(paragraph, str):
        errors.add(label, f"expected str, got {type(paragraph).__name__}", field="Paragraph")
        return None
    rid = rec.get("id")
    sid = str(rid) if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid) else f"{row.index:04d}"
    context = [Turn(question=q, answer=a) for q, a in zip(questions[:-1], answers[:-1], strict=True)]
    return Sample(id=sid, benchmark="chartqapro", question=questions[-1], answers=[answers[-1]], image=image,
                  context=context, split=split, chartqapro=ChartQAProMeta(question_type=qtype, year_flags=flags),
                  source=SourceInfo(context=paragraph) if paragraph and paragraph.strip() else None)


@benchmark("chartqapro", "ChartQAPro (HF ahmed-masry/ChartQAPro, split test): multi-turn rows, last turn graded, "
                         "earlier turns as context", default_source=lambda: BenchmarkSource(hf_id=HF_ID, split="test"))
def load_chartqapro(source: BenchmarkSource, strict: bool) -> LoadResult:
    """Load ChartQAPro from an HF id, a save_to_disk folder, a folder of parquet/JSON files or one such file."""
    check_options(source, "chartqapro", ())
    errors = RowErrors("chartqapro", strict)
    rows = open_rows(source, errors, default_split="test")
    samples = [s for r in rows.rows if (s := row_to_sample(r, errors, rows.split, rows.base_dir)) is not None]
    return LoadResult("chartqapro", reject_duplicate_ids(samples, errors), errors.errors, base_dir=rows.base_dir)
