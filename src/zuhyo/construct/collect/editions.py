"""White-paper editions and series: which edition a start URL belongs to, and the latest edition of a series.

HakushoBench §3.1 keeps "the latest edition only" of each of its 33 white-paper series. An **edition** is the
crawl scope of a start URL (scheme + host + the profile's ``edition_prefix``, see
:func:`~zuhyo.construct.collect.html_figures.edition_scope`). Its **year** is read from the scope's path by the
profile's ``edition_year`` patterns (``/ja/r05/`` → 2023, ``wp-je93`` → 1993, ``hakusho/h28/`` → 2016), else by
two generic patterns (a path segment that is a Western year, ``/2024/``, or an era code, ``/r05/``). Its
**series** is the scope with that year token, and any other path segment that is a year (``/h27/``,
``/2023/``), replaced by ``*``: ``…/whitepaper/ja/r04/`` and ``…/whitepaper/ja/r05/`` are two editions of the
series ``…/whitepaper/ja/*/``; ``/hakusyo/mlit/h27/hakusho/h28/`` is in ``/hakusyo/mlit/*/hakusho/*/``. An
edition whose year cannot be read from its URL is a series of its own (it is always kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from pydantic import BaseModel

from zuhyo.construct.collect.html_figures import edition_scope, edition_year
from zuhyo.construct.collect.profiles import SiteProfile

#: Tried after the profile's own ``edition_year`` patterns: a Western-year path segment, an era-code segment.
FALLBACK_YEAR_PATTERNS = (r"/(?P<western>(?:19|20)\d{2})/", r"/(?P<era>[rhsRHS])(?P<year>\d{2})/")
_OTHER_YEAR_SEGMENTS = re.compile(r"/(?:(?:19|20)\d{2}|[rhsRHS]\d{1,2})(?=/)")


class Edition(BaseModel):
    """The edition a start URL belongs to."""

    scope: str
    """The crawl scope (absolute URL prefix)."""
    series: str
    """The scope with the year token replaced by ``*`` (the scope itself when no year was found)."""
    year: int | None = None
    """The edition's Western year, when the URL says it."""
    label: str
    """The path segment holding the year (``r05``, ``wp-je93``, ``2024``), else the scope's last path segment."""


def edition_of(url: str, profile: SiteProfile) -> Edition:
    """The edition (scope, series, year) of the start URL ``url`` under ``profile``."""
    scope = edition_scope(url, profile)
    parts = urlsplit(scope)
    path = parts.path
    last = path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc
    for pattern in (*profile.edition_year, *FALLBACK_YEAR_PATTERNS):
        m = re.search(pattern, path)
        if m is None:
            continue
        spans = [m.span(g) for g, v in m.groupdict().items() if v]
        if not spans:
            continue
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
        one = profile.model_copy(update={"edition_year": [pattern]})
        year = edition_year(scope, "", one)
        if year is None:
            continue
        # Other year-like segments vary between editions too (国土交通白書: /hakusyo/mlit/h27/hakusho/h28/).
        series_path = _OTHER_YEAR_SEGMENTS.sub("/*", path[:start]) + "*" + _OTHER_YEAR_SEGMENTS.sub("/*", path[end:])
        seg_start, seg_end = path.rfind("/", 0, start) + 1, path.find("/", end)
        label = path[seg_start:seg_end if seg_end >= 0 else len(path)]
        return Edition(scope=scope, series=f"{parts.scheme}://{parts.netloc}{series_path}", year=year, label=label)
    return Edition(scope=scope, series=scope, year=None, label=last)


def latest_editions(editions: Iterable[Edition], known: Iterable[Edition] = ()) -> tuple[list[Edition],
                                                                                          list[tuple[Edition, str]]]:
    """Split ``editions`` into those to keep (the latest of their series) and those left out, with the reason.

    ``known`` are editions already in the workspace: a later one there also supersedes an older one asked for.
    Editions without a year are kept. Among equal years (the same edition asked twice) the first is kept.
    """
    editions = list(editions)
    best: dict[str, Edition] = {}
    for e in [*known, *editions]:
        if e.year is not None and (e.series not in best or e.year > (best[e.series].year or 0)):
            best[e.series] = e
    keep: list[Edition] = []
    left: list[tuple[Edition, str]] = []
    for e in editions:
        top = best.get(e.series)
        if e.year is None or top is None or e.year >= (top.year or 0):
            if all(k.scope != e.scope for k in keep):
                keep.append(e)
        else:
            left.append((e, f"a later edition of the series {e.series} is {top.label} ({top.year}): "
                            f"{top.scope} (--latest-edition)"))
    return keep, left


__all__ = ["FALLBACK_YEAR_PATTERNS", "Edition", "edition_of", "latest_editions"]
