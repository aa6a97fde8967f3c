"""`zuhyo collect latex --papers CSV --top-cited 1% --years 2007-2023`: the user's paper list with citation counts,
the top cited per year (DomainCQA §4.2) recorded as provenance, and chart abstracts voted on those only."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

from zuhyo.construct.collect.paper_selection import (
    PaperRecord,
    parse_papers_csv,
    parse_percent,
    parse_years,
    select_papers,
)
from zuhyo.errors import DataError


def test_top_one_percent_per_year_ties_by_id():
    papers = [PaperRecord(id=f"p{i:03d}", year=2010 + i % 2, citations=i) for i in range(300)]
    papers.append(PaperRecord(id="old", year=2001, citations=10_000))
    chosen = select_papers(papers, fraction=0.01, years=(2007, 2023))
    top = sorted(i for i, s in chosen.items() if s.top_cited)
    # 150 papers a year -> ceil(1.5) = 2 per year: the two most cited of each year
    assert top == ["p296", "p297", "p298", "p299"]
    assert chosen["p299"].rank == 1 and chosen["p299"].group_size == 150 and chosen["p299"].rule == "top 1% per year"
    assert not chosen["old"].in_years and not chosen["old"].top_cited  # §4.1: 2007-2023 only
    tied = select_papers([PaperRecord(id=i, year=2020, citations=5) for i in ("b", "a", "c")], fraction=0.01)
    assert [i for i, s in tied.items() if s.top_cited] == ["a"]  # at least one per year; ties by id
    sub = select_papers([PaperRecord(id="x", year=2020, citations=1, subdomain="stars"),
                         PaperRecord(id="y", year=2020, citations=9, subdomain="galaxies")], fraction=0.01)
    assert sub["x"].top_cited and sub["y"].top_cited and sub["x"].rule == "top 1% per year and subdomain"


def test_parsing_errors_name_the_line():
    assert parse_percent("1%") == pytest.approx(0.01) and parse_percent("0.05") == pytest.approx(0.05)
    assert parse_years("2007-2023") == (2007, 2023)
    for bad in ("0%", "150%", "many"):
        with pytest.raises(DataError, match="--top-cited"):
            parse_percent(bad)
    with pytest.raises(DataError, match="--years expects FIRST-LAST"):
        parse_years("2023-2007")
    with pytest.raises(DataError, match="papers.csv line 1: missing column"):
        parse_papers_csv("id,year\na,2020\n", "papers.csv")
    with pytest.raises(DataError, match="papers.csv line 3: citations of 'b' is 'n/a', expected a whole number"):
        parse_papers_csv("id,year,citations\na,2020,3\nb,2020,n/a\n", "papers.csv")
    with pytest.raises(DataError, match="line 3: duplicate id 'a'"):
        parse_papers_csv("id,year,citations\na,2020,3\na,2021,4\n", "papers.csv")


pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

TEX = r"""\documentclass{article}
\usepackage{graphicx}
\title{Paper %s}
\begin{document}
\begin{abstract}We measure %s.\end{abstract}
\section{Results}
Figure~\ref{fig:a} and Figure~\ref{fig:b} show it.
\begin{figure}\includegraphics{a.png}\caption{First chart of %s.}\label{fig:a}\end{figure}
\begin{figure}\includegraphics{b.png}\caption{Second chart of %s.}\label{fig:b}\end{figure}
\section{Conclusions}
It works.
\end{document}
"""


def make_paper(root: Path, paper_id: str, seed: int) -> Path:
    from PIL import Image

    folder = root / paper_id
    folder.mkdir(parents=True)
    (folder / "main.tex").write_text(TEX % ((paper_id,) * 4), encoding="utf-8")
    Image.new("RGB", (64, 48), (seed * 40 % 256, 30, 30)).save(folder / "a.png")
    Image.new("RGB", (48, 64), (30, seed * 70 % 256, 200)).save(folder / "b.png")
    return folder


def test_collect_latex_papers_top_cited_and_abstracts_on_those(tmp_path: Path):
    from zuhyo.construct.qa.abstracts import papers_to_vote
    from zuhyo.construct.workspace import Workspace

    ids = ["2001.00001", "2001.00002", "2001.00003", "2101.00004", "0601.00005", "2101.00006"]
    folders = [make_paper(tmp_path / "src", pid, i) for i, pid in enumerate(ids)]
    listing = tmp_path / "papers.csv"
    listing.write_text("id,year,citations\n2001.00001,2020,5\n2001.00002,2020,50\n2001.00003,2020,7\n"
                       "2101.00004,2021,1\n0601.00005,2006,900\n", encoding="utf-8")  # 2101.00006 not listed
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    out = run_cli_json("collect", "latex", str(ws), *map(str, folders), "--papers", str(listing),
                       "--top-cited", "1%", "--years", "2007-2023")
    assert out["papers"] == ["2001.00001", "2001.00002", "2001.00003", "2101.00004"]
    assert out["selection"] == {"listed": 5, "in_years": 4, "top_cited": ["2001.00002", "2101.00004"],
                                "out_of_years": ["0601.00005"], "not_listed": ["2101.00006"]}
    with Workspace.open(ws) as w:
        from zuhyo.construct.workspace.tables import Document

        with w.db.read() as s:
            meta = {d.locator: d.meta["selection"] for d in s.query(Document)}
        assert meta["2001.00002"] | {"papers_csv": ""} == {
            "year": 2020, "citations": 50, "subdomain": "", "in_years": True, "top_cited": True, "rank": 1,
            "group_size": 3, "rule": "top 1% per year", "papers_csv": ""}
        assert meta["2001.00001"]["rank"] == 3 and not meta["2001.00001"]["top_cited"]
        papers, skipped, n = papers_to_vote(w)
    assert sorted(p.locator for p in papers) == ["2001.00002", "2101.00004"] and n == 4
    assert {s.locator for s in skipped} == {"2001.00001", "2001.00003"}
    assert all("not among the top-cited papers" in s.reason for s in skipped)
    proc = run_cli("collect", "latex", str(ws), str(folders[0]), "--top-cited", "1%", check=False)
    assert proc.returncode == 1 and "--top-cited and --years need --papers" in proc.stderr
