"""Which papers a DomainCQA-style benchmark draws from: a user's paper list with citation counts, and the top
cited per year (DomainCQA §4.1–4.2). Pure: CSV text in, a selection out; no network (the counts are the user's).

- §4.1: FQA charts come from "astronomical papers published on arXiv between 2007 and 2023": ``years``.
- §4.2 ("Charts for AQA pairs"): "we select the top 1% most-cited papers per year within each of astronomy's six
  major subdomains"; their chart abstracts (Algorithm 2) carry the AQA pairs. :func:`select_papers` ranks each
  year's papers (each (year, subdomain) when the CSV has a ``subdomain`` column) by citations and marks the top
  ``fraction`` as top cited.

Readings (the paper does not say): a group of n papers keeps ``ceil(fraction · n)`` of them, at least one; ties
in citations are broken by the paper id (ascending), so a list fixes the selection.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict

from pydantic import BaseModel, Field

from zuhyo.errors import DataError


class PaperRecord(BaseModel):
    """One row of the paper list."""

    id: str
    """The paper id as ``collect latex`` reads it from a source's name (arXiv id: ``2101.01234``)."""
    year: int
    """Publication year."""
    citations: int
    """Citation count, as the user supplies it (the source of the counts is theirs)."""
    subdomain: str = ""
    """The field's subdomain (DomainCQA §4.2: six in astronomy), when the CSV has the column."""


class PaperSelection(BaseModel):
    """One paper's place in the selection, as recorded on its document (``documents.meta["selection"]``)."""

    year: int
    citations: int
    subdomain: str = ""
    in_years: bool = True
    """Inside the ``years`` range (DomainCQA §4.1: 2007–2023)."""
    top_cited: bool = False
    """Among the top ``rule`` of its group (DomainCQA §4.2); only these get chart abstracts."""
    rank: int = 0
    """Rank by citations within its group (1 = most cited); 0 outside the year range."""
    group_size: int = 0
    """Papers in its group (same year, and subdomain when given) inside the year range."""
    rule: str = ""
    """The selection rule, e.g. ``top 1% per year``."""
    papers_csv: str = ""
    """The list the counts came from."""


def parse_percent(text: str) -> float:
    """``1%`` or ``0.01`` → 0.01; ``DataError`` for anything outside (0, 1]."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise DataError(f"--top-cited expects a share such as 1% or 0.01, got {text!r}") from None
    if not 0 < value <= 1:
        raise DataError(f"--top-cited must be above 0 and at most 100%, got {text!r}")
    return value


def parse_years(text: str) -> tuple[int, int]:
    """``2007-2023`` → (2007, 2023)."""
    first, sep, last = text.partition("-")
    if not sep or not first.strip().isdigit() or not last.strip().isdigit() or int(first) > int(last):
        raise DataError(f"--years expects FIRST-LAST such as 2007-2023, got {text!r}")
    return int(first), int(last)


def parse_papers_csv(text: str, name: str) -> list[PaperRecord]:
    """Columns ``id``, ``year``, ``citations`` (and optionally ``subdomain``); ``DataError`` naming ``name`` and the
    line for a missing column, a bad number or a duplicate id."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    fields = {f.strip().lower(): f for f in reader.fieldnames or []}
    missing = [c for c in ("id", "year", "citations") if c not in fields]
    if missing:
        raise DataError(f"{name} line 1: missing column(s) {', '.join(missing)} (columns: id, year, citations"
                        "[, subdomain])")
    out: list[PaperRecord] = []
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        cell = {k: (row.get(f) or "").strip() for k, f in fields.items()}
        if not any(cell.values()):
            continue
        if not cell["id"]:
            raise DataError(f"{name} line {line}: empty id")
        for col in ("year", "citations"):
            if not cell[col].isdigit():
                raise DataError(f"{name} line {line}: {col} of {cell['id']!r} is {cell[col]!r}, expected a whole "
                                "number")
        if cell["id"] in seen:
            raise DataError(f"{name} line {line}: duplicate id {cell['id']!r} (first on line {seen[cell['id']]})")
        seen[cell["id"]] = line
        out.append(PaperRecord(id=cell["id"], year=int(cell["year"]), citations=int(cell["citations"]),
                               subdomain=cell.get("subdomain", "")))
    if not out:
        raise DataError(f"{name}: no papers listed")
    return out


def select_papers(papers: list[PaperRecord], *, fraction: float | None = None,
                  years: tuple[int, int] | None = None, papers_csv: str = "") -> dict[str, PaperSelection]:
    """Each listed paper's :class:`PaperSelection`: inside ``years`` or not, and with ``fraction`` its rank and
    whether it is among the top cited of its year (and subdomain); see the module docstring."""
    by_subdomain = any(p.subdomain for p in papers)
    rule = ""
    if fraction is not None:
        rule = f"top {fraction * 100:g}% per year" + (" and subdomain" if by_subdomain else "")
    groups: dict[tuple[int, str], list[PaperRecord]] = defaultdict(list)
    out: dict[str, PaperSelection] = {}
    for p in papers:
        inside = years is None or years[0] <= p.year <= years[1]
        out[p.id] = PaperSelection(year=p.year, citations=p.citations, subdomain=p.subdomain, in_years=inside,
                                   rule=rule, papers_csv=papers_csv)
        if inside:
            groups[(p.year, p.subdomain if by_subdomain else "")].append(p)
    for members in groups.values():
        ranked = sorted(members, key=lambda p: (-p.citations, p.id))
        keep = max(1, math.ceil(fraction * len(ranked))) if fraction is not None else 0
        for rank, p in enumerate(ranked, 1):
            out[p.id] = out[p.id].model_copy(update={"rank": rank, "group_size": len(ranked),
                                                     "top_cited": rank <= keep})
    return out


class SelectionSummary(BaseModel):
    """What the selection did, for the collect report."""

    listed: int = 0
    """Papers in the list."""
    in_years: int = 0
    top_cited: list[str] = Field(default_factory=list)
    """Ids of the papers marked top cited."""
    out_of_years: list[str] = Field(default_factory=list)
    """Sources skipped because their paper is outside ``--years``."""
    not_listed: list[str] = Field(default_factory=list)
    """Sources skipped because their paper id is not in the list."""


__all__ = ["PaperRecord", "PaperSelection", "SelectionSummary", "parse_papers_csv", "parse_percent", "parse_years",
           "select_papers"]
