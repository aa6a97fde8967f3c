"""White-paper series lists as data (``series/*.csv``): which series a benchmark collects and where each is.

``hakushobench`` is HakushoBench's own list: the 33 series of its Table 5 (Appendix C) with the edition it used,
the topic group §4 puts it in and its number of QA pairs. Table 5 names the series, not who publishes them or
where: the ministry, the host and the start URL (the edition's table of contents or figure list) are ours, written
from the sites as we know them and **not checked from this machine** (no network here); check them before a
crawl, or give your own CSV with the same columns (``--series my-series.csv``). §3.1 keeps "the most recent
edition from each white paper series": ``zuhyo collect html --series`` collects with ``latest_edition`` on.

Columns: ``title_ja``, ``title_en``, ``edition`` (a year), ``topic`` (one of :class:`zuhyo.schema.TopicGroup`),
``examples`` (QA pairs in the benchmark; may be empty), ``ministry``, ``site`` (host), ``start_url``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from zuhyo.errors import DataError
from zuhyo.schema import TopicGroup

SERIES_DIR = Path(__file__).resolve().parent / "series"
COLUMNS = ("title_ja", "title_en", "edition", "topic", "examples", "ministry", "site", "start_url")


class WhitePaperSeries(BaseModel):
    """One white-paper series of a list."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title_ja: str = Field(min_length=1)
    """The series' Japanese title without the edition, e.g. 情報通信白書."""
    title_en: str = ""
    """Its English title (HakushoBench Table 5)."""
    edition: int | None = None
    """The edition (year) the list was made from (Table 5's); the crawl still keeps the latest it is given."""
    topic: TopicGroup
    """The topic group (HakushoBench §4: Security, Economy, Society, Infrastructure, Energy & Environment,
    Diplomacy)."""
    examples: int | None = None
    """QA pairs the benchmark has from this series (Table 5), when known."""
    ministry: str = ""
    """Who publishes it (ours, not in Table 5)."""
    site: str = ""
    """The host that serves its HTML editions (ours)."""
    start_url: str = Field(min_length=1)
    """Where the crawl starts: the edition's table of contents or figure list (ours; unchecked offline)."""

    @field_validator("start_url")
    @classmethod
    def _http(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"start_url must be an http(s) URL, got {v!r}")
        return v

    def source_meta(self) -> dict[str, object]:
        """What the collector records on the edition's source (and the export reads back)."""
        return {"white_paper": self.title_ja, "white_paper_en": self.title_en, "topic": self.topic.value,
                "publisher": self.ministry or None}


def series_names() -> list[str]:
    """The bundled lists' names, sorted."""
    return sorted(p.stem for p in SERIES_DIR.glob("*.csv"))


def parse_series_csv(text: str, name: str) -> list[WhitePaperSeries]:
    """Parse a series list; ``DataError`` naming ``name`` and the line for a missing column or a bad row."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or []) and c not in ("examples", "edition")]
    if missing:
        raise DataError(f"{name} line 1: missing column(s) {', '.join(missing)} (columns: {', '.join(COLUMNS)})")
    rows: list[WhitePaperSeries] = []
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        values = {k: (v or "").strip() for k, v in row.items() if k in COLUMNS}
        if not any(values.values()):
            continue
        data: dict[str, object] = {k: v for k, v in values.items() if v != "" or k not in ("examples", "edition")}
        try:
            series = WhitePaperSeries.model_validate(data)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise DataError(f"{name} line {line}: {where}: {first['msg']}") from None
        if series.title_ja in seen:
            raise DataError(f"{name} line {line}: series {series.title_ja!r} listed twice (first on line "
                            f"{seen[series.title_ja]})")
        seen[series.title_ja] = line
        rows.append(series)
    if not rows:
        raise DataError(f"{name}: no series listed")
    return rows


def load_series(name: str) -> list[WhitePaperSeries]:
    """A bundled list by name (``hakushobench``) or a CSV file by path."""
    if name.endswith(".csv") or "/" in name or "\\" in name:
        path = Path(name)
    else:
        if name not in series_names():
            raise DataError(f"unknown series list {name!r}; bundled lists: {', '.join(series_names())} (or give "
                            "the path of a CSV with the columns " + ", ".join(COLUMNS) + ")")
        path = SERIES_DIR / f"{name}.csv"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"series list {path}: cannot read ({e})") from None
    return parse_series_csv(text, str(path))


def pick_series(rows: list[WhitePaperSeries], titles: list[str]) -> list[WhitePaperSeries]:
    """The rows named in ``titles`` (Japanese or English title, case-insensitive), in the list's order; all rows
    when ``titles`` is empty. ``DataError`` naming a title the list does not have."""
    if not titles:
        return rows
    wanted = {t.strip().casefold() for t in titles}
    known = {r.title_ja.casefold() for r in rows} | {r.title_en.casefold() for r in rows if r.title_en}
    unknown = [t for t in titles if t.strip().casefold() not in known]
    if unknown:
        raise DataError(f"series {unknown[0]!r} is not in the list (e.g. {rows[0].title_ja}, {rows[0].title_en})")
    return [r for r in rows if r.title_ja.casefold() in wanted or r.title_en.casefold() in wanted]


__all__ = ["COLUMNS", "WhitePaperSeries", "load_series", "parse_series_csv", "pick_series", "series_names"]
