"""`zuhyo collect latex`: arXiv LaTeX sources (folders or tarballs) into a workspace (registered in
``build_collect``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import (
    SHOWN_ERRORS,
    JsonOpt,
    console,
    emit_json,
    fail,
    print_item_errors,
    result_console,
    stage_progress,
)
from zuhyo.cli.workspace import WsArg, open_workspace


def latex_cmd(
    ws: WsArg,
    sources: Annotated[list[Path], typer.Argument(help="arXiv source folders or tarballs (.tar.gz, .tgz, .tar).")],
    paper_id: Annotated[str | None, typer.Option("--paper-id", help="The paper's id (one SOURCE only); default: "
                                                                    "the arXiv id in the folder or tarball name, "
                                                                    "else the name.")] = None,
    max_pixels: Annotated[int, typer.Option("--max-pixels", min=1, help="Most pixels an image may declare (or a "
                                                                        "PDF figure's images together); checked "
                                                                        "before decoding.")] = 89_478_485,
    papers: Annotated[Path | None, typer.Option("--papers", help="CSV of papers (columns id, year, citations, "
                                                                 "optional subdomain; your counts): only listed "
                                                                 "sources are collected, each with its selection "
                                                                 "as provenance.")] = None,
    top_cited: Annotated[str | None, typer.Option("--top-cited", help="With --papers: mark the top share (e.g. "
                                                                      "1%) most-cited papers per year (and "
                                                                      "subdomain); `zuhyo abstracts` then votes on "
                                                                      "those only (DomainCQA §4.2).")] = None,
    years: Annotated[str | None, typer.Option("--years", help="With --papers: only papers of these years, e.g. "
                                                              "2007-2023 (DomainCQA §4.1).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Collect figures from LaTeX sources: captions, labels, citing paragraphs; PDF/EPS rasterised; resumable."""
    from zuhyo.construct.collect.paper_selection import parse_papers_csv, parse_percent, parse_years, select_papers

    if (top_cited is not None or years is not None) and papers is None:
        fail("--top-cited and --years need --papers (the list with each paper's year and citations)")
    selection = None
    if papers is not None:
        try:
            text = papers.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            fail(f"{papers}: cannot read ({e})")
        selection = select_papers(parse_papers_csv(text, str(papers)),
                                  fraction=parse_percent(top_cited) if top_cited is not None else None,
                                  years=parse_years(years) if years is not None else None, papers_csv=str(papers))

    with open_workspace(ws) as w, stage_progress(quiet=json_out) as (_on_start, on_item):
        from zuhyo.construct.collect.latex import collect_latex

        report = collect_latex(w, sources, paper_id=paper_id, max_pixels=max_pixels, papers=selection,
                               on_item=on_item)
    if json_out:
        emit_json(report.model_dump(mode="json"))
        return
    from rich.markup import escape

    result_console.print(f"{len(report.papers)} papers, {report.figure_environments} figure environments: "
                         f"{report.figures} figures added ({report.documents} new documents), "
                         f"{report.skipped_existing} already there, {report.errors} errors", highlight=False)
    if report.selection is not None:
        sel = report.selection
        result_console.print(f"  paper list: {sel.listed} listed, {sel.in_years} in the years, {len(sel.top_cited)} "
                             f"top cited; skipped {len(sel.not_listed)} sources not listed, {len(sel.out_of_years)} "
                             "out of the years", highlight=False)
    # The reason names the figure or file itself: prefix only the paper.
    print_item_errors([f"{item.file.split(': ', 1)[0]}: {item.reason}" for item in report.error_items])
    for member in report.skipped_members[:SHOWN_ERRORS]:
        console.print(f"  [yellow]not extracted: {escape(member)}[/]", highlight=False, soft_wrap=True)
