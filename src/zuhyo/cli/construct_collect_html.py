"""`zuhyo collect html`: a white paper's HTML edition into a workspace (registered in ``build_collect``)."""

from __future__ import annotations

from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, fail, print_item_errors, result_console, stage_progress
from zuhyo.cli.workspace import WsArg, open_workspace


def html_cmd(
    ws: WsArg,
    urls: Annotated[list[str] | None, typer.Argument(help="Start URLs: an edition's table of contents or figure "
                                                          "list (several editions at once allowed).")] = None,
    profile: Annotated[str | None, typer.Option("--profile", help="Site profile: a bundled name (soumu, mod, cao, "
                                                                  "mlit, generic) or a .toml file; default: by the "
                                                                  "URL's host, else generic.")] = None,
    latest_edition: Annotated[bool, typer.Option("--latest-edition", help="Keep only the latest edition of each "
                                                                          "series (by the year in the URL; "
                                                                          "HakushoBench §3.1).")] = False,
    series: Annotated[str | None, typer.Option("--series", help="Also collect the latest edition of every series "
                                                                "of a list, recording its white paper and topic "
                                                                "group: a bundled list (hakushobench: "
                                                                "HakushoBench Table 5) or a CSV file.")] = None,
    only_series: Annotated[list[str] | None, typer.Option("--only-series", help="With --series: just this series "
                                                                              "(Japanese or English title); "
                                                                              "repeatable.")] = None,
    max_pages: Annotated[int, typer.Option("--max-pages", min=1, help="Most pages fetched per edition.")] = 5000,
    delay: Annotated[float, typer.Option("--delay", min=0.0, help="Seconds between request starts to one host "
                                                                  "(robots.txt Crawl-delay also obeyed).")] = 0.5,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight per host.")] = 2,
    max_crawl_delay: Annotated[float, typer.Option("--max-crawl-delay", min=0.0, help="Longest robots.txt "
                                                   "Crawl-delay obeyed, seconds; a longer one is waited this long "
                                                   "and reported.")] = 60.0,
    json_out: JsonOpt = False,
) -> None:
    """Crawl white papers' HTML editions (in scope, robots.txt obeyed, polite); one figure per <img>; resumable.

    Only the editions' own hosts are fetched (a redirect out of the scope is never followed), so private hosts need
    no flag here: a start URL on one is taken as given.
    """
    from zuhyo.construct.collect.profiles import load_profile

    if profile is not None:
        load_profile(profile)  # an unknown name fails here, in one line listing the known profiles
    from zuhyo.construct.collect.series import load_series, pick_series

    if only_series and series is None:
        fail("--only-series needs --series")
    listed = pick_series(load_series(series), only_series or []) if series is not None else []
    if not urls and not listed:
        fail("give start URLs or --series")

    with open_workspace(ws) as w, stage_progress(quiet=json_out) as (_on_start, on_item):
        from zuhyo.construct.collect.html import collect_html

        report = collect_html(w, urls or [], profile=profile, latest_edition=latest_edition, series=listed,
                              max_pages=max_pages,
                              delay_s=delay, per_host=concurrency, max_crawl_delay_s=max_crawl_delay,
                              on_item=on_item)
    if json_out:
        emit_json(report.model_dump(mode="json"))
    else:
        from rich.markup import escape

        result_console.print(f"{len(report.editions)} editions, {report.pages} pages: {report.figures} figures added "
                             f"({report.documents} new documents, {report.images_fetched} images downloaded), "
                             f"{report.skipped_existing} already there, {report.errors} errors", highlight=False)
        for capped in report.crawl_delays_capped:
            console.print(f"  [yellow]crawl delay capped: {escape(capped)}[/]", highlight=False, soft_wrap=True)
        for left in report.left_out_editions:
            console.print(f"  left out {escape(left.scope)}: {escape(left.reason)}", highlight=False, soft_wrap=True)
        print_item_errors([item.reason for item in report.error_items])
    if report.unreachable:
        fail("; ".join(f"nothing collected from {u.url}: {u.reason}" for u in report.unreachable))
