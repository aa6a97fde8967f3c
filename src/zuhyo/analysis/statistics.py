"""Dataset statistics tables: image types, difficulty flags, sources/topics and CCV attribute proportions.

The tables follow the papers' layout:

- image types — HakushoBench Table 2 (11 classes): questions and distinct images per class, with shares;
- difficulty flags — HakushoBench Table 3: questions carrying each flag (a question may carry several, so the
  shares do not add up to 100 %), plus the questions without any flag;
- topic groups and sources — HakushoBench Table 5 (white papers grouped into six topic groups): the white paper
  and topic group come from ``sample.hakusho``; other benchmarks fall back to ``source.title`` and
  ``source.publisher``;
- CCV proportions — DomainCQA Table 4: the share of charts that have each of the 10 binary Chart Complexity Vector
  attributes set, from ``sample.astro.ccv``, named and grouped as in DomainCQA Table 3
  (:data:`~zuhyo.schema.CCV_ATTRIBUTES`) unless other names are given. A chart carries several questions, so
  charts are counted once each, by image (not by question); the distribution of the CCV score (number of
  attributes set, DomainCQA Figure 4) comes with it.

"Distinct images" are told apart by :func:`image_key`: the recorded SHA-256 when there is one, otherwise the
resolved file path, the URL, or the SHA-256 of embedded bytes. Files are not read, so statistics stay fast; two
copies of one picture at different paths without a recorded hash count as two images.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zuhyo.benchmarks.base import LoadResult
from zuhyo.schema import CCV_ATTRIBUTES, Flag, ImageType, Sample, TopicGroup

NOT_ANNOTATED = "(not annotated)"
NO_FLAG = "(no flag)"
UNKNOWN = "(unknown)"
CCV_SIZE = len(CCV_ATTRIBUTES)


@dataclass
class StatTable:
    """One statistics table: a title, column names and rows of cells (str, int or float shares in [0, 1])."""

    key: str
    """File stem and JSON key, e.g. ``image_types``."""
    title: str
    columns: list[str]
    rows: list[list[Any]]
    share_columns: frozenset[str] = frozenset()
    """Columns holding shares in [0, 1]: printed as percentages in Markdown, as decimals in CSV and JSON."""
    note: str = ""

    def to_records(self) -> list[dict[str, Any]]:
        """Rows as dicts (column → value), shares rounded to 6 decimals."""
        return [{c: (round(v, 6) if c in self.share_columns and v is not None else v)
                 for c, v in zip(self.columns, row, strict=True)} for row in self.rows]

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table headed by the title (and the note, when there is one)."""
        def cell(col: str, v: Any) -> str:
            if v is None:
                return "—"
            if col in self.share_columns:
                return f"{100 * v:.1f} %"
            return str(v).replace("|", "\\|")

        numeric = [all(isinstance(r[i], int | float) or r[i] is None for r in self.rows) and bool(self.rows)
                   for i in range(len(self.columns))]
        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "|".join("---:" if num else "---" for num in numeric) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(cell(c, v) for c, v in zip(self.columns, row, strict=True)) + " |")
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        """CSV text with a header row; shares as decimals."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for rec in self.to_records():
            writer.writerow(["" if v is None else v for v in rec.values()])
        return buf.getvalue()

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "columns": self.columns, "rows": self.to_records(), "note": self.note}


@dataclass
class DatasetStatistics:
    """All tables of one benchmark, plus totals and the problems met."""

    benchmark: str
    questions: int
    images: int
    """Distinct images (see :func:`image_key`)."""
    questions_without_image: int
    row_errors: int
    tables: list[StatTable] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Data problems that did not stop the statistics (e.g. one chart with two different CCVs)."""

    def table(self, key: str) -> StatTable:
        for t in self.tables:
            if t.key == key:
                return t
        raise KeyError(f"no table {key!r}; tables: {', '.join(t.key for t in self.tables)}")

    def to_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "questions": self.questions, "images": self.images,
                "questions_without_image": self.questions_without_image, "row_errors": self.row_errors,
                "tables": {t.key: t.to_json() for t in self.tables}, "warnings": self.warnings}

    def to_markdown(self) -> str:
        head = (f"## {self.benchmark}\n\n{self.questions} questions over {self.images} distinct images"
                f" ({self.questions_without_image} questions without an image, {self.row_errors} row errors).\n\n")
        return head + "\n".join(t.to_markdown() for t in self.tables)


def image_key(sample: Sample, base_dir: Path | None) -> str | None:
    """Identity of a sample's image for counting distinct images; None when the sample has no image."""
    img = sample.image
    if img is None:
        return None
    if img.sha256:
        return f"sha256:{img.sha256.lower()}"
    if img.data is not None:
        return f"sha256:{hashlib.sha256(img.data).hexdigest()}"
    path = img.resolve_path(base_dir)
    if path is not None:
        return f"path:{path.resolve()}"
    return f"url:{img.url}"


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def image_type_table(samples: Sequence[Sample], base_dir: Path | None) -> StatTable:
    """HakushoBench Table 2: questions and distinct images per image type (all 11 classes, zeros included)."""
    questions: Counter[str] = Counter()
    images: dict[str, set[str]] = defaultdict(set)
    for s in samples:
        label = s.image_type.value if s.image_type else NOT_ANNOTATED
        questions[label] += 1
        key = image_key(s, base_dir)
        if key is not None:
            images[label].add(key)
    n_q = len(samples)
    n_img = len({k for keys in images.values() for k in keys})
    labels = [t.value for t in ImageType] + ([NOT_ANNOTATED] if questions[NOT_ANNOTATED] else [])
    rows = [[label, questions[label], _share(questions[label], n_q), len(images[label]),
             _share(len(images[label]), n_img)] for label in labels]
    rows.append(["Total", n_q, _share(n_q, n_q), n_img, _share(n_img, n_img)])
    return StatTable("image_types", "Image types (HakushoBench Table 2)",
                     ["image type", "questions", "share of questions", "images", "share of images"], rows,
                     frozenset({"share of questions", "share of images"}))


def flag_table(samples: Sequence[Sample]) -> StatTable:
    """HakushoBench Table 3: questions carrying each difficulty flag (multi-label) and those with none."""
    counts: Counter[str] = Counter()
    for s in samples:
        for f in set(s.flags):  # a flag listed twice on one question still counts that question once
            counts[f.value] += 1
    no_flag = sum(1 for s in samples if not s.flags)
    n = len(samples)
    rows: list[list[Any]] = [[f.value, counts[f.value], _share(counts[f.value], n)] for f in Flag]
    rows.append([NO_FLAG, no_flag, _share(no_flag, n)])
    return StatTable("flags", "Difficulty flags (HakushoBench Table 3)", ["flag", "questions", "share of questions"],
                     rows, frozenset({"share of questions"}),
                     note=f"A question may carry several flags, so shares do not add up to 100 % (n = {n}).")


def _source_name(s: Sample) -> str:
    if s.hakusho is not None and s.hakusho.white_paper:
        return s.hakusho.white_paper
    if s.source is not None and s.source.title:
        return s.source.title
    return UNKNOWN


def _topic(s: Sample) -> str:
    if s.hakusho is not None and s.hakusho.topic_group is not None:
        return s.hakusho.topic_group.value
    return UNKNOWN


def topic_group_table(samples: Sequence[Sample], base_dir: Path | None) -> StatTable:
    """HakushoBench Table 5 (by group): questions, images and distinct sources per topic group."""
    questions: Counter[str] = Counter()
    images: dict[str, set[str]] = defaultdict(set)
    sources: dict[str, set[str]] = defaultdict(set)
    for s in samples:
        topic = _topic(s)
        questions[topic] += 1
        sources[topic].add(_source_name(s))
        key = image_key(s, base_dir)
        if key is not None:
            images[topic].add(key)
    n = len(samples)
    labels = [t.value for t in TopicGroup] + ([UNKNOWN] if questions[UNKNOWN] else [])
    rows: list[list[Any]] = [[label, len(sources[label] - {UNKNOWN}), questions[label], _share(questions[label], n),
                              len(images[label])] for label in labels]
    return StatTable("topic_groups", "Topic groups (HakushoBench Table 5)",
                     ["topic group", "sources", "questions", "share of questions", "images"], rows,
                     frozenset({"share of questions"}),
                     note="Topic group from sample.hakusho.topic_group; (unknown) where a sample has none.")


def source_table(samples: Sequence[Sample], base_dir: Path | None) -> StatTable:
    """HakushoBench Table 5 (by source): one row per white paper / source title, with its group and publisher."""
    questions: Counter[tuple[str, str, str]] = Counter()
    images: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for s in samples:
        publisher = s.source.publisher if s.source is not None and s.source.publisher else UNKNOWN
        row_key = (_topic(s), _source_name(s), publisher)
        questions[row_key] += 1
        key = image_key(s, base_dir)
        if key is not None:
            images[row_key].add(key)
    order = {t.value: i for i, t in enumerate(TopicGroup)}
    keys = sorted(questions, key=lambda k: (order.get(k[0], len(order)), -questions[k], k[1], k[2]))
    n = len(samples)
    rows: list[list[Any]] = [[*k, questions[k], _share(questions[k], n), len(images[k])] for k in keys]
    return StatTable("sources", "Sources (HakushoBench Table 5)",
                     ["topic group", "source", "publisher", "questions", "share of questions", "images"], rows,
                     frozenset({"share of questions"}),
                     note="Source: sample.hakusho.white_paper, else sample.source.title.")


def ccv_tables(samples: Sequence[Sample], base_dir: Path | None,
               names: Sequence[str] | None = None) -> tuple[list[StatTable], list[str]]:
    """DomainCQA Table 4: share of charts with each CCV attribute set, counting each chart (image) once.

    Returns the attribute table, the CCV-score distribution (attributes set per chart, DomainCQA Figure 4) and
    warnings. A chart whose questions disagree on its CCV is left out of both tables and named in a warning;
    questions with a CCV but no image are counted once each (they cannot be matched to a chart).
    """
    if names is not None and len(names) != CCV_SIZE:
        raise ValueError(f"CCV attribute names: expected {CCV_SIZE}, got {len(names)}")
    labels = list(names) if names is not None else [a.name for a in CCV_ATTRIBUTES]
    by_chart: dict[str, tuple[tuple[int, ...], str]] = {}
    conflicts: dict[str, list[str]] = {}
    for s in samples:
        if s.astro is None or s.astro.ccv is None:
            continue
        ccv = tuple(s.astro.ccv)
        key = image_key(s, base_dir) or f"sample:{s.key}"
        if key in by_chart and by_chart[key][0] != ccv:
            conflicts.setdefault(key, [by_chart[key][1]]).append(s.id)
            continue
        by_chart.setdefault(key, (ccv, s.id))
    warnings = [f"chart {key} has different CCVs in samples {', '.join(ids)}; left out of the CCV tables"
                for key, ids in conflicts.items()]
    vectors = [ccv for key, (ccv, _) in by_chart.items() if key not in conflicts]
    n = len(vectors)
    groups = [a.group if names is None else "" for a in CCV_ATTRIBUTES]
    attr_rows: list[list[Any]] = [[i + 1, groups[i], labels[i], sum(v[i] for v in vectors),
                                   _share(sum(v[i] for v in vectors), n)] for i in range(CCV_SIZE)]
    definitions = "; ".join(f"{a.name} = 1: {a.complex}" for a in CCV_ATTRIBUTES)
    attrs = StatTable("ccv_attributes", "CCV attribute proportions (DomainCQA Table 4)",
                      ["dimension", "complexity", "attribute", "charts", "share of charts"], attr_rows,
                      frozenset({"share of charts"}),
                      note=f"Each chart counted once, by image (n = {n} charts with a CCV)." + (
                          f" Attributes as defined in DomainCQA Table 3: {definitions}" if names is None else ""))
    score_counts = Counter(sum(v) for v in vectors)
    score_rows: list[list[Any]] = [[k, score_counts[k], _share(score_counts[k], n)] for k in range(CCV_SIZE + 1)]
    scores = StatTable("ccv_scores", "CCV complexity score (attributes set per chart; DomainCQA Figure 4)",
                       ["score", "charts", "share of charts"], score_rows, frozenset({"share of charts"}))
    return [attrs, scores], warnings


def dataset_statistics(result: LoadResult, *, ccv_names: Sequence[str] | None = None) -> DatasetStatistics:
    """Every table for one loaded benchmark. CCV tables are included when any sample has a CCV."""
    samples = result.samples
    keys = {k for s in samples if (k := image_key(s, result.base_dir)) is not None}
    stats = DatasetStatistics(benchmark=result.benchmark, questions=len(samples), images=len(keys),
                              questions_without_image=sum(1 for s in samples if s.image is None),
                              row_errors=len(result.errors))
    stats.tables += [image_type_table(samples, result.base_dir), flag_table(samples),
                     topic_group_table(samples, result.base_dir), source_table(samples, result.base_dir)]
    if any(s.astro is not None and s.astro.ccv is not None for s in samples):
        tables, warnings = ccv_tables(samples, result.base_dir, ccv_names)
        stats.tables += tables
        stats.warnings += warnings
    return stats


def write_statistics(stats: DatasetStatistics, out_dir: Path) -> list[Path]:
    """Write ``<key>.md`` and ``<key>.csv`` per table, ``statistics.md`` (all tables) and ``statistics.json``."""
    import json

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for t in stats.tables:
        for suffix, text in ((".md", t.to_markdown()), (".csv", t.to_csv())):
            path = out_dir / f"{t.key}{suffix}"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    combined = out_dir / "statistics.md"
    combined.write_text(stats.to_markdown(), encoding="utf-8")
    doc = out_dir / "statistics.json"
    doc.write_text(json.dumps(stats.to_json(), ensure_ascii=False, indent=2), encoding="utf-8")
    return [*written, combined, doc]
