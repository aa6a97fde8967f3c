"""What ``zuhyo draft`` asks for: one :class:`DraftKind` per question category, with its prompt and reply schema.

Astro style follows DomainCQA Table 1 and §3.2: fundamental (FQA) pairs in four categories, Visual {Color,
Style, Text, Layout}, Data {Point, Interval, Calculation}, Inference and Summary, drafted from the chart and its
caption; advanced (AQA) pairs, KB-Inference and KB-Summary, drafted for chart abstracts (Algorithm 2) with the
paper's descriptive content as well (Appendix C: "For the AQA pair, the input additionally included descriptive
content from the associated paper"). Each prompt quotes the paper's one-line description of its category
(Appendix C; the prompts themselves are figures 10-15 of the paper, whose text is not given, so the rest of each
prompt is ours). The Visual aspects are described as §4.2 counts them: color aspects (211, Table 1 Color),
structural elements (133, Style), OCR-related inquiries (213, Text) and chart-type classification (45, Layout),
matched by their counts. Data answers are numbers scored by Algorithm 3 (Point, Interval:
``numeric_retrieval``, which needs the axis range and scale) or by exact match (Calculation: ``numeric_exact``);
every other astro answer is open and carries key points for the key-point judge (Appendix G).

Hakusho style is HakushoBench §3.2: one hard short-answer question per image meeting requirements (a)-(c),
with one or more difficulty flags (:class:`zuhyo.schema.Flag`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from zuhyo.evaluate.judges.numeric_values import reference_quantities
from zuhyo.prompts import Prompt, load_prompt
from zuhyo.schema import AstroAspect, Flag


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=5)
    answer: str = Field(min_length=1)

    @field_validator("question", "answer")
    @classmethod
    def _stripped(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v.strip()


class OpenReply(_Reply):
    """An open answer with the key points a correct answer must contain (Visual, Inference, Summary, AQA)."""

    key_points: list[str] = Field(min_length=1, max_length=10)

    @field_validator("key_points")
    @classmethod
    def _points(cls, v: list[str]) -> list[str]:
        points = [p.strip() for p in v if p.strip()]
        if not points:
            raise ValueError("at least one non-blank key point")
        return points


class Axis(BaseModel):
    """The axis a numeric answer is read on (DomainCQA Algorithm 3 scores relative to its range)."""

    model_config = ConfigDict(extra="forbid")

    min: float
    max: float
    scale: Literal["linear", "log"]

    @model_validator(mode="after")
    def _range(self) -> Axis:
        if not self.min < self.max:
            raise ValueError(f"axis min {self.min:g} must be below max {self.max:g}")
        if self.scale == "log" and self.min <= 0:
            raise ValueError("a logarithmic axis needs min > 0")
        return self


class NumericReply(_Reply):
    """A value (Point) or a range of values (Interval) read on an axis."""

    axis: Axis


def _axis_listed(schema: dict[str, Any]) -> None:
    """Strict structured output wants every property required: the sent schema lists ``axis`` (nullable)."""
    schema.setdefault("required", []).append("axis")
    schema["properties"]["axis"].pop("default", None)


class CalculationReply(_Reply):
    """A number derived from values read off the chart; the axis is kept when given (null or left out)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_axis_listed)

    axis: Axis | None = None


class HakushoReply(_Reply):
    """A short answer with its difficulty flags (HakushoBench §3.2: at least one per accepted question)."""

    difficulty: list[Flag] = Field(min_length=1)

    @field_validator("difficulty")
    @classmethod
    def _unique(cls, v: list[Flag]) -> list[Flag]:
        return list(dict.fromkeys(v))


def _numbers(least: int) -> Callable[[BaseModel], str]:
    def check(reply: BaseModel) -> str:
        found = len(reference_quantities(getattr(reply, "answer", "")))
        if found < least:
            what = "a number" if least == 1 else f"{least} numbers (the lower and upper end)"
            return f"the answer must contain {what}, found {found}"
        return ""
    return check


@dataclass(frozen=True)
class DraftKind:
    """One kind of question the drafting stage asks a model for, per figure."""

    style: str
    """astro or hakusho."""
    category: str | None
    """``FQA-Visual`` … ``AQA-KB-Summary`` (astro), None (hakusho)."""
    aspect: AstroAspect | None
    prompt_name: str
    reply_model: type[_Reply]
    answer_kind: str | None = None
    """Stored on the item; None lets the scorer derive it (Visual: counts exact, the rest open)."""
    focus: str = ""
    """What the aspect asks about ($aspect_focus)."""
    answer_form: str = ""
    """The numeric answer's form ($answer_form)."""
    check: Callable[[BaseModel], str] | None = None
    """A further check of a schema-valid reply; a problem is re-asked like a schema error."""

    @property
    def abstract_only(self) -> bool:
        """AQA kinds are drafted for chart abstracts, with the paper's context."""
        return bool(self.category and self.category.startswith("AQA-"))

    @property
    def key_part(self) -> str:
        """The kind's part of the item key: ``FQA-Visual:Color``, ``FQA-Inference``, ``short-answer``."""
        if self.category is None:
            return "short-answer"
        return f"{self.category}:{self.aspect.value}" if self.aspect else self.category

    @property
    def prompt(self) -> Prompt:
        return load_prompt(self.prompt_name)

    def render(self, *, caption: str, context: str = "", domain: str = "astronomy") -> str:
        values = {"caption": caption, "context": context, "domain": domain, "aspect": self.aspect or "",
                  "aspect_focus": self.focus, "answer_form": self.answer_form}
        return self.prompt.render(**{k: str(v) for k, v in values.items()})


def _visual(aspect: AstroAspect, focus: str) -> DraftKind:
    return DraftKind("astro", "FQA-Visual", aspect, "construct/draft_visual", OpenReply, focus=focus)


ASTRO_KINDS: tuple[DraftKind, ...] = (
    _visual(AstroAspect.COLOR, "color aspects: which colour an element has, or what a colour stands for."),
    _visual(AstroAspect.STYLE, "structural elements: line styles, markers, patterns, error bars, panels and axes."),
    _visual(AstroAspect.TEXT, "OCR-related: text printed in the chart (axis labels and units, tick labels, legend "
                              "entries, annotations, formulas)."),
    _visual(AstroAspect.LAYOUT, "chart-type classification and layout: what kind of chart it is and how its "
                                "panels and parts are arranged."),
    DraftKind("astro", "FQA-Data", AstroAspect.POINT, "construct/draft_data", NumericReply, "numeric_retrieval",
              focus="retrieve the value of one specific data point.",
              answer_form="one number, the value read off the chart (with its unit when the axis has one).",
              check=_numbers(1)),
    DraftKind("astro", "FQA-Data", AstroAspect.INTERVAL, "construct/draft_data", NumericReply, "numeric_retrieval",
              focus="retrieve a range of values (the interval a quantity spans, or where something happens).",
              answer_form="two numbers, the lower and the upper end of the range.", check=_numbers(2)),
    DraftKind("astro", "FQA-Data", AstroAspect.CALCULATION, "construct/draft_data", CalculationReply, "numeric_exact",
              focus="compute one number from values read off the chart (a difference, ratio, sum or count).",
              answer_form="one number, the result of the calculation.", check=_numbers(1)),
    DraftKind("astro", "FQA-Inference", None, "construct/draft_inference", OpenReply, "open"),
    DraftKind("astro", "FQA-Summary", None, "construct/draft_summary", OpenReply, "open"),
    DraftKind("astro", "AQA-KB-Inference", None, "construct/draft_kb_inference", OpenReply, "open"),
    DraftKind("astro", "AQA-KB-Summary", None, "construct/draft_kb_summary", OpenReply, "open"),
)

HAKUSHO_KIND = DraftKind("hakusho", None, None, "construct/draft_hakusho", HakushoReply)

#: The astro categories ``--category`` accepts.
ASTRO_CATEGORIES = tuple(dict.fromkeys(k.category for k in ASTRO_KINDS if k.category))


def kinds_for(style: str, categories: list[str] | None = None) -> tuple[DraftKind, ...]:
    """The kinds a style drafts, restricted to ``categories`` (astro only); ValueError naming a wrong one."""
    if style == "hakusho":
        if categories:
            raise ValueError("--category applies to --style astro only")
        return (HAKUSHO_KIND,)
    if style != "astro":
        raise ValueError(f"--style must be astro or hakusho, got {style!r}")
    if not categories:
        return ASTRO_KINDS
    unknown = [c for c in categories if c not in ASTRO_CATEGORIES]
    if unknown:
        raise ValueError(f"unknown category {unknown[0]!r} (one of {', '.join(ASTRO_CATEGORIES)})")
    return tuple(k for k in ASTRO_KINDS if k.category in categories)


#: Characters of each piece of paper context put into an AQA prompt.
CONTEXT_CHARS = 4000


def paper_context(meta: dict[str, object], caption: str | None, citing: list[str]) -> str:
    """The AQA input beside the chart (Appendix C): the paper's title, abstract and conclusion when stored, the
    caption and the paragraphs citing the figure."""
    parts: list[str] = []
    for key, label in (("title", "Title"), ("abstract", "Abstract"), ("conclusion", "Conclusion")):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(f"{label}: {value.strip()[:CONTEXT_CHARS]}")
    parts.append(f"Caption: {(caption or '(no caption)').strip()[:CONTEXT_CHARS]}")
    if citing:
        parts.append("Text citing the chart:\n" + "\n".join(f"- {c.strip()[:CONTEXT_CHARS]}" for c in citing[:5]))
    return "\n".join(parts)
