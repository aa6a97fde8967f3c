"""Editions and series of white-paper start URLs, and which edition --latest-edition keeps (HakushoBench §3.1)."""

from __future__ import annotations

import pytest

from zuhyo.construct.collect.editions import Edition, edition_of, latest_editions
from zuhyo.construct.collect.profiles import load_profile


@pytest.mark.parametrize(("url", "profile", "series", "year", "label"), [
    ("https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/html/index.html", "soumu",
     "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/*/", 2023, "r05"),
    ("https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/h30/html/index.html", "soumu",
     "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/*/", 2018, "h30"),
    ("https://www5.cao.go.jp/keizai3/keizaiwp/wp-je93/wp-je93-000i1.html", "cao",
     "https://www5.cao.go.jp/keizai3/keizaiwp/wp-je*/", 1993, "wp-je93"),
    ("https://www.mlit.go.jp/hakusyo/mlit/h27/hakusho/h28/html/n1101000.html", "mlit",
     "https://www.mlit.go.jp/hakusyo/mlit/*/hakusho/*/", 2016, "h28"),
    ("https://www.clearing.mod.go.jp/hakusho_data/2023/html/zuhyo.html", "mod",
     "https://www.clearing.mod.go.jp/hakusho_data/*/", 2023, "2023"),
    ("https://example.org/report/2024/index.html", "generic", "https://example.org/report/*/", 2024, "2024"),
    ("https://example.org/docs/index.html", "generic", "https://example.org/docs/", None, "docs"),
])
def test_edition_of(url: str, profile: str, series: str, year: int | None, label: str) -> None:
    ed = edition_of(url, load_profile(profile))
    assert (ed.series, ed.year, ed.label) == (series, year, label)


def test_latest_edition_per_series() -> None:
    soumu, generic = load_profile("soumu"), load_profile("generic")
    r04, r05, h30 = (edition_of(f"https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/{e}/html/index.html", soumu)
                     for e in ("r04", "r05", "h30"))
    other = edition_of("https://example.org/report/2020/index.html", generic)
    undated = edition_of("https://example.org/docs/index.html", generic)
    keep, left = latest_editions([r04, h30, other, r05, undated, r05])
    assert keep == [other, r05, undated]  # one per series, the same edition asked twice kept once
    assert [(e.label, why.split(":")[0]) for e, why in left] == [
        ("r04", "a later edition of the series https"), ("h30", "a later edition of the series https")]
    assert "r05 (2023)" in left[0][1]
    # a later edition already in the workspace supersedes the one asked for
    known = [Edition(scope="https://example.org/report/2023/", series=other.series, year=2023, label="2023")]
    keep, left = latest_editions([other], known)
    assert keep == [] and "2023 (2023): https://example.org/report/2023/" in left[0][1]
