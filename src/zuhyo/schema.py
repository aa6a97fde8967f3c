"""zuhyo's one data model.

Every stage (adapters, the evaluation runner, judges, reports, the construction pipeline) reads and writes
these types. This module imports nothing of zuhyo.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ImageType(enum.StrEnum):
    """The HakushoBench image taxonomy (HakushoBench paper, Table 2: 11 classes)."""

    BAR = "Bar"
    LINE = "Line"
    PIE = "Pie"
    AREA = "Area"
    SCATTER = "Scatter"
    BUBBLE = "Bubble"
    MAP = "Map"
    TABLE = "Table"
    INFOGRAPHIC = "Infographic"
    DASHBOARD = "Dashboard"
    OTHER = "Other"


class Flag(enum.StrEnum):
    """HakushoBench question difficulty flags (HakushoBench paper, Table 3; several per question)."""

    GLOBAL = "Global"
    MULTI_HOP = "Multi-hop"
    COUNTING = "Counting"
    EXTERNAL_KNOWLEDGE = "External knowledge"
    VISUAL = "Visual"
    OTHER = "Other"


class TopicGroup(enum.StrEnum):
    """HakushoBench topic groups of the 33 white papers (HakushoBench paper, Table 5)."""

    SECURITY = "Security"
    ECONOMY = "Economy"
    SOCIETY = "Society"
    INFRASTRUCTURE = "Infrastructure"
    ENERGY_ENVIRONMENT = "Energy & Environment"
    DIPLOMACY = "Diplomacy"


class AstroQAType(enum.StrEnum):
    """DomainCQA QA families: Fundamental (FQA: general chart understanding, no outside knowledge) and Advanced
    (AQA: needing domain knowledge) question-answer pairs (DomainCQA §3, Table 1)."""

    FQA = "FQA"
    AQA = "AQA"


class AstroCategory(enum.StrEnum):
    """DomainCQA question categories (DomainCQA Table 1)."""

    VISUAL = "Visual"
    DATA = "Data"
    INFERENCE = "Inference"
    SUMMARY = "Summary"
    KB_INFERENCE = "KB-Inference"
    KB_SUMMARY = "KB-Summary"


class AstroAspect(enum.StrEnum):
    """DomainCQA sub-aspects: Visual {Color, Style, Text, Layout} and Data {Point, Interval, Calculation}."""

    COLOR = "Color"
    STYLE = "Style"
    TEXT = "Text"
    LAYOUT = "Layout"
    POINT = "Point"
    INTERVAL = "Interval"
    CALCULATION = "Calculation"


#: Which category each aspect belongs to (DomainCQA Table 1).
ASPECT_CATEGORY: dict[AstroAspect, AstroCategory] = {
    AstroAspect.COLOR: AstroCategory.VISUAL,
    AstroAspect.STYLE: AstroCategory.VISUAL,
    AstroAspect.TEXT: AstroCategory.VISUAL,
    AstroAspect.LAYOUT: AstroCategory.VISUAL,
    AstroAspect.POINT: AstroCategory.DATA,
    AstroAspect.INTERVAL: AstroCategory.DATA,
    AstroAspect.CALCULATION: AstroCategory.DATA,
}

#: Categories of each QA family (DomainCQA Table 1).
QA_TYPE_CATEGORIES: dict[AstroQAType, tuple[AstroCategory, ...]] = {
    AstroQAType.FQA: (AstroCategory.VISUAL, AstroCategory.DATA, AstroCategory.INFERENCE, AstroCategory.SUMMARY),
    AstroQAType.AQA: (AstroCategory.KB_INFERENCE, AstroCategory.KB_SUMMARY),
}


@dataclass(frozen=True)
class CCVAttribute:
    """One attribute of DomainCQA's Chart Complexity Vector: 0 = simple, 1 = complex (DomainCQA Appendix A.1)."""

    name: str
    """Short name, as in DomainCQA §3.1 and Table 3 without "Complexity" (``Annotation``)."""
    group: str
    """Visual, Data Interpretation or Structural complexity (the groups of Table 3)."""
    simple: str
    """When the attribute is 0 (Table 3, verbatim)."""
    complex: str
    """When the attribute is 1 (Table 3, verbatim)."""


#: The 10 CCV attributes in vector order, with their definitions: DomainCQA Appendix A, Table 3 ("Definitions of CCV
#: Attributes"). ``AstroMeta.ccv[i]`` is attribute ``CCV_ATTRIBUTES[i]``. (§3.1 lists the data-interpretation group
#: as {Axis, Element, Formula, Scale}; the numbered Table 3, and Table 4, put Scale 7th and Formula 8th.)
CCV_ATTRIBUTES: tuple[CCVAttribute, ...] = (
    CCVAttribute("Annotation", "Visual", "No annotations are used.",
                 "Extensive annotations such as descriptive text, arrows, or markers."),
    CCVAttribute("Color", "Visual", "Monochrome or up to two distinct colors.",
                 "More than two distinct colors or employs a color bar."),
    CCVAttribute("Legend", "Visual", "Contains no legend or a minimal legend (no more than three categories).",
                 "Contains a complex legend (more than three categories or intricate representations)."),
    CCVAttribute("Pattern", "Visual", "No more than two distinct graphical patterns.",
                 "More than two distinct graphical patterns."),
    CCVAttribute("Axis", "Data Interpretation", "Single axis.",
                 "Multiple dependent axes (e.g., secondary y-axis, dual x-axis)."),
    CCVAttribute("Element", "Data Interpretation", "Contains a single graphical element.",
                 "Contains more than two graphical elements."),
    CCVAttribute("Scale", "Data Interpretation", "Employs a linear scale.",
                 "Utilizes logarithmic, power-law, or mixed scales."),
    CCVAttribute("Formula", "Data Interpretation", "Does not contain any mathematical formulas.",
                 "Includes mathematical formulas."),
    CCVAttribute("Subplot", "Structural", "A single-panel chart.", "Multiple interrelated subplots are present."),
    CCVAttribute("Type", "Structural",
                 "Uses basic chart types (e.g., bar, line, scatter, histogram, pie) with a sparse dataset.",
                 "Uses complex chart types (e.g., heatmaps, network graphs, mixed-element charts, multiple chart "
                 "combinations) and/or handles high-density data (e.g., dense bar, line, scatter, or histogram "
                 "charts)."),
)


class _Model(BaseModel):
    # Bytes travel as base64 in JSON so embedded images survive a JSONL round trip.
    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")


class ImageRef(_Model):
    """Where a sample's image is: a local file, a URL, or embedded bytes (at least one of them)."""

    path: str | None = None
    """Local file path. Relative paths are relative to the file (JSONL) or folder the sample was loaded from."""
    url: str | None = None
    """Remote URL (http/https) for URL-only datasets; materialise with `zuhyo images fetch`."""
    data: bytes | None = None
    """The encoded image file itself (PNG/JPEG/...), embedded."""
    sha256: str | None = None
    """Hex SHA-256 of the encoded file bytes, when known; the key of the content-addressed store."""
    width: int | None = None
    """Width in pixels, when known."""
    height: int | None = None
    """Height in pixels, when known."""
    mime: str | None = None
    """MIME type such as image/png, when known."""

    @model_validator(mode="after")
    def _one_location(self) -> ImageRef:
        if self.path is None and self.url is None and self.data is None:
            raise ValueError("an image reference needs a path, a url or embedded data")
        return self

    def resolve_path(self, base_dir: Path | None) -> Path | None:
        """The local file this reference points at, resolved against ``base_dir`` when relative."""
        if self.path is None:
            return None
        p = Path(self.path)
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        return p


class Turn(_Model):
    """One earlier turn of a multi-turn conversation (shown to the model as context, not graded)."""

    question: str
    """The question asked in that turn."""
    answer: str
    """The reference answer of that turn."""


class SourceInfo(_Model):
    """Provenance of the image or the statistic behind it."""

    url: str | None = None
    """Page or file the figure (or its data) comes from."""
    title: str | None = None
    """Title of the source: a white paper, a statistical table, a paper."""
    publisher: str | None = None
    """Who published it (ministry, journal, agency)."""
    caption: str | None = None
    """The figure caption as published."""
    context: str | None = None
    """Surrounding text (paragraph citing the figure), when collected."""
    paper_id: str | None = None
    """arXiv id or other paper identifier."""
    license: str | None = None
    """Licence of the source, when stated."""


class HakushoMeta(_Model):
    """HakushoBench metadata per example (HakushoBench paper, Section 3 and Table 5)."""

    white_paper: str | None = None
    """White paper series, e.g. 情報通信白書."""
    topic_group: TopicGroup | None = None
    """One of the paper's six topic groups."""
    original_id: str | None = None
    """The dataset's `original_id` column."""


class AstroMeta(_Model):
    """DomainCQA / AstroChart metadata (DomainCQA Table 1 and Algorithm 3)."""

    qa_type: AstroQAType
    """FQA (Fundamental: general chart understanding) or AQA (Advanced: needs domain knowledge), DomainCQA §3."""
    category: AstroCategory
    """Question category."""
    aspect: AstroAspect | None = None
    """Sub-aspect for Visual and Data questions."""
    answer_kind: Literal["numeric_retrieval", "numeric_exact", "open", "choice"] | None = None
    """How it is scored: numeric retrieval (Algorithm 3), exact numeric derivation, open (key points), choice.
    None (not given): derived from ``category``/``aspect`` when scored (DomainCQA §5.1, Appendix G; see
    ``zuhyo.evaluate.judges.astro_routing``)."""
    axis_min: float | None = None
    """Lower end of the axis the numeric answer is read from (numeric retrieval)."""
    axis_max: float | None = None
    """Upper end of that axis."""
    log_scale: bool = False
    """True when that axis is logarithmic: errors are then measured in log10 space."""
    key_points: list[str] = Field(default_factory=list)
    """Key points an open answer should contain (for the LLM key-point score)."""
    ccv: list[int] | None = None
    """The chart's 10-attribute binary Chart Complexity Vector, when known."""

    @model_validator(mode="after")
    def _consistent(self) -> AstroMeta:
        if self.category not in QA_TYPE_CATEGORIES[self.qa_type]:
            raise ValueError(f"category {self.category.value} does not belong to {self.qa_type.value}")
        if self.aspect is not None and ASPECT_CATEGORY[self.aspect] is not self.category:
            raise ValueError(f"aspect {self.aspect.value} does not belong to category {self.category.value}")
        if self.answer_kind == "numeric_retrieval" and (self.axis_min is None or self.axis_max is None):
            raise ValueError("numeric retrieval items need axis_min and axis_max")
        if self.ccv is not None and (len(self.ccv) != 10 or any(v not in (0, 1) for v in self.ccv)):
            raise ValueError("ccv must be 10 binary values")
        return self


class ChartQAProMeta(_Model):
    """ChartQAPro per-question fields used by its official scorer."""

    question_type: str
    """`Question Type` column: Factoid, Multi Choice, Conversational, Hypothetical, Fact Checking."""
    year_flags: list[str] = Field(default_factory=list)
    """`Year` column: per answer element, "YES" when it is a year (exact match) else "NO"."""


class CharXivMeta(_Model):
    """CharXiv fields used by its grading."""

    kind: Literal["descriptive", "reasoning"]
    """Descriptive (Q1–Q19 templates) or reasoning question."""
    figure_id: int
    """CharXiv figure id."""
    qid: int | None = None
    """Descriptive template id (1–19)."""
    inst_category: int | None = None
    """Reasoning answer-type category (1–4)."""
    subplot_loc: Any = None
    """Descriptive: which subplot the question is about (as in the val JSON)."""
    num_subplots: int | None = None
    """Descriptive: number of subplots in the figure."""
    subject: str | None = None
    """arXiv category of the source paper."""


class Sample(_Model):
    """One chart/table VQA item."""

    id: str
    """Identifier, unique within its benchmark."""
    benchmark: str
    """Name of the benchmark (registry name) the sample belongs to."""
    question: str
    """The (last-turn) question graded."""
    answers: list[str]
    """Reference answer(s); the first is the primary one."""
    image: ImageRef | None = None
    """The chart/table image; None when the dataset row has none (reported as missing)."""
    context: list[Turn] = Field(default_factory=list)
    """Earlier turns of a multi-turn conversation, oldest first."""
    image_type: ImageType | None = None
    """HakushoBench image type, when annotated."""
    flags: list[Flag] = Field(default_factory=list)
    """Difficulty flags, when annotated."""
    split: str | None = None
    """Dataset split or subset (e.g. human / augmented)."""
    source: SourceInfo | None = None
    """Provenance."""
    hakusho: HakushoMeta | None = None
    """HakushoBench-specific metadata."""
    astro: AstroMeta | None = None
    """AstroChart-specific metadata."""
    chartqapro: ChartQAProMeta | None = None
    """ChartQAPro-specific metadata."""
    charxiv: CharXivMeta | None = None
    """CharXiv-specific metadata."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the source row carried (JSON-serialisable)."""

    @model_validator(mode="after")
    def _non_empty(self) -> Sample:
        if not self.id:
            raise ValueError("id must not be empty")
        if not self.answers:
            raise ValueError("at least one reference answer is needed")
        return self

    @property
    def answer(self) -> str:
        """The primary reference answer."""
        return self.answers[0]

    @property
    def key(self) -> str:
        """`benchmark/id`, unique across benchmarks."""
        return f"{self.benchmark}/{self.id}"


class RowError(_Model):
    """A problem with one input row or item, named precisely enough to find and fix it."""

    dataset: str
    """Benchmark or file the row belongs to."""
    row: str
    """Row index or item id."""
    field: str | None = None
    """The field at fault, when one is."""
    message: str
    """What is wrong."""

    def __str__(self) -> str:
        where = f"{self.dataset} row {self.row}" + (f" field {self.field!r}" if self.field else "")
        return f"{where}: {self.message}"


def sample_to_json(sample: Sample) -> str:
    """One compact JSON line for a sample (bytes as base64; unset defaults omitted)."""
    return sample.model_dump_json(exclude_defaults=True)


def sample_from_json(line: str | bytes) -> Sample:
    """Parse one JSON line written by :func:`sample_to_json`."""
    return Sample.model_validate_json(line)


def sample_to_flat(sample: Sample) -> dict[str, Any]:
    """A flat row for Parquet / HF datasets: image columns apart, everything else as JSON in `meta_json`."""
    img = sample.image
    rest = sample.model_dump(mode="json", exclude={"id", "benchmark", "question", "answers", "image"},
                             exclude_defaults=True)
    return {
        "id": sample.id,
        "benchmark": sample.benchmark,
        "question": sample.question,
        "answers": list(sample.answers),
        "image_bytes": img.data if img else None,
        "image_path": img.path if img else None,
        "image_url": img.url if img else None,
        "image_sha256": img.sha256 if img else None,
        "image_width": img.width if img else None,
        "image_height": img.height if img else None,
        "image_mime": img.mime if img else None,
        "meta_json": json.dumps(rest, ensure_ascii=False),
    }


FLAT_COLUMNS = ("id", "benchmark", "question", "answers", "image_bytes", "image_path", "image_url",
                "image_sha256", "image_width", "image_height", "image_mime", "meta_json")


def sample_from_flat(row: dict[str, Any]) -> Sample:
    """Inverse of :func:`sample_to_flat` (also of an export's shard rows, whose image is an ``image`` column)."""
    image = None
    data = row.get("image_bytes")
    hub_image = row.get("image")  # an export's datasets.Image column ({bytes, path}) in place of image_bytes
    if data is None and isinstance(hub_image, dict):
        data = hub_image.get("bytes")
    if data is not None or row.get("image_path") or row.get("image_url"):
        image = ImageRef(
            data=data, path=row.get("image_path"), url=row.get("image_url"),
            sha256=row.get("image_sha256"), width=row.get("image_width"), height=row.get("image_height"),
            mime=row.get("image_mime"),
        )
    rest = json.loads(row.get("meta_json") or "{}")
    return Sample(id=row["id"], benchmark=row["benchmark"], question=row["question"],
                  answers=list(row["answers"]), image=image, **rest)


class Figure(_Model):
    """One figure (chart, table or other image) collected into a construction workspace, with its provenance.

    The construction pipeline (``zuhyo.construct``) stores these in the workspace database and the annotation app
    reads them from there (HakushoBench §3.1: captions, context and source per white-paper figure; DomainCQA
    §4.1: caption, citing paragraphs and paper per arXiv figure).
    """

    id: int | None = None
    """Workspace id (None before it is stored)."""
    sha256: str
    """Hex SHA-256 of the image file: its key in the workspace's content-addressed image store."""
    locator: str
    """Where the figure is inside its document (relative file path, ``<img>`` src, LaTeX label, PDF xref)."""
    document_id: int | None = None
    """Workspace id of the document the figure was collected from."""
    caption: str | None = None
    """The caption as published, as plain text."""
    figure_number: str | None = None
    """The figure's number as printed (図表1-1-1-1, 第3-3-12図, Figure 4 ...)."""
    context: list[str] = Field(default_factory=list)
    """Paragraphs that cite or surround the figure."""
    page: str | None = None
    """Page (PDF page number, HTML page name) the figure is on."""
    section: str | None = None
    """Heading path of the section the figure is in."""
    page_url: str | None = None
    """URL of the page the figure was found on (HTML editions)."""
    paper_id: str | None = None
    """arXiv id or other paper identifier (papers)."""
    back_data_url: str | None = None
    """Link to the figure's underlying data (csv/xls/xlsx), when published."""
    edition: str | None = None
    """Edition of the publication (e.g. 令和5年版)."""
    year: int | None = None
    """Western year of the edition."""
    width: int | None = None
    """Width in pixels."""
    height: int | None = None
    """Height in pixels."""
    mime: str | None = None
    """MIME type of the stored image file."""
    provenance: dict[str, Any] = Field(default_factory=dict)
    """Anything else the collector recorded (original file name, source line, extra CSV columns ...)."""

    @model_validator(mode="after")
    def _sha(self) -> Figure:
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(f"sha256 must be 64 lowercase hex digits, got {self.sha256!r}")
        return self


class Decision(_Model):
    """One decision about a figure by a pipeline stage or a person; decisions are append-only.

    A figure's current status in a stage is its latest decision in that stage, so a person overturns a stage's
    decision by recording a later one (``zuhyo decide``).
    """

    figure_id: int
    """Workspace id of the figure."""
    stage: str
    """Pipeline stage the decision belongs to (filter, classify, sample, review ...)."""
    decision: str
    """What was decided: keep or drop (stages may add their own values)."""
    reason: str
    """Why, in words a person can review."""
    decided_by: str
    """Who or what decided: ``user:NAME`` for people, ``stage:NAME`` or ``model:SPEC`` for the pipeline."""
    at: str | None = None
    """When (ISO 8601, UTC), set by the workspace."""
    evidence: dict[str, Any] = Field(default_factory=dict)
    """Supporting data: scores, the duplicate's id, model answers."""
