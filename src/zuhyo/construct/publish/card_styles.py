"""The dataset card's statistics, one section per QA style present in the export.

An astro-style export (DomainCQA) reports its question categories (Table 1) and the charts' complexity vectors
(Table 4, Figure 4); a hakusho-style one (HakushoBench) its difficulty flags (Table 3) and topic groups and sources
(Table 5). A style's section appears only when the export holds items of that style, so an astro card shows no
all-zero flag table. A section is a function in :data:`STYLE_SECTIONS`: another section (e.g. a composition
plan's planned and realised counts) is one more entry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zuhyo.schema import Sample

if TYPE_CHECKING:
    from zuhyo.analysis.statistics import DatasetStatistics, StatTable


@dataclass(frozen=True)
class CardInput:
    """What a section draws on."""

    samples: Sequence[Sample]
    stats: DatasetStatistics
    plots: dict[str, tuple[str, str, str]]
    """Statistics table key → (title, relative PNG path, caption) of its chart."""


def style_of(sample: Sample) -> str:
    """``astro`` for DomainCQA-style items (they carry an astro block), else ``hakusho``."""
    return "astro" if sample.astro is not None else "hakusho"


def _table(card: CardInput, key: str) -> list[str]:
    table = next((t for t in card.stats.tables if t.key == key), None)
    if table is None:
        return []
    parts = [table.to_markdown()]
    if key in card.plots:
        title, path, caption = card.plots[key]
        parts.append(f"![{title}]({path})\n\n{caption}\n")
    return parts


def category_table(samples: Sequence[Sample]) -> StatTable:
    """DomainCQA Table 1: questions per QA type, category and aspect (astro-style items)."""
    from zuhyo.analysis.statistics import StatTable

    counts: Counter[tuple[str, str, str]] = Counter()
    for s in samples:
        if s.astro is not None:
            aspect = s.astro.aspect.value if s.astro.aspect is not None else "—"
            counts[(s.astro.qa_type.value, s.astro.category.value, aspect)] += 1
    n = sum(counts.values())
    rows = [[*key, k, k / n] for key, k in sorted(counts.items())]
    rows.append(["Total", "", "", n, 1.0 if n else None])
    return StatTable("categories", "Question categories (DomainCQA Table 1)",
                     ["QA type", "category", "aspect", "questions", "share of questions"], rows,
                     frozenset({"share of questions"}))


def astro_section(card: CardInput) -> list[str]:
    items = [s for s in card.samples if style_of(s) == "astro"]
    return [f"## DomainCQA style: categories and complexity ({len(items)} items)\n",
            category_table(items).to_markdown(), *_table(card, "ccv_attributes"), *_table(card, "ccv_scores")]


def hakusho_section(card: CardInput) -> list[str]:
    items = [s for s in card.samples if style_of(s) == "hakusho"]
    return [f"## HakushoBench style: flags, topics and sources ({len(items)} items)\n", *_table(card, "flags"),
            *_table(card, "topic_groups"), *_table(card, "sources")]


#: Style → its card section, in the order they appear.
STYLE_SECTIONS: dict[str, Callable[[CardInput], list[str]]] = {"astro": astro_section, "hakusho": hakusho_section}
#: The statistics tables some style's section shows; the others (image types) are shown for every export.
STYLE_TABLES = frozenset({"ccv_attributes", "ccv_scores", "flags", "topic_groups", "sources"})


def statistics_sections(card: CardInput) -> list[str]:
    """The card's statistics: the tables every export has, then one section per style present."""
    parts: list[str] = []
    for table in card.stats.tables:
        if table.key not in STYLE_TABLES:
            parts += _table(card, table.key)
    present = {style_of(s) for s in card.samples}
    for style, section in STYLE_SECTIONS.items():
        if style in present:
            parts += section(card)
    return parts
