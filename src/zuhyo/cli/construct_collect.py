"""`zuhyo collect ...`: fill a construction workspace with figures (folder here; html, latex and pdf in their own
modules, registered below)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, print_item_errors, result_console, stage_progress
from zuhyo.cli.construct_collect_html import html_cmd
from zuhyo.cli.construct_collect_latex import latex_cmd
from zuhyo.cli.workspace import WsArg, open_workspace

#: Pillow's own default limit (zuhyo.images.verify.DEFAULT_MAX_PIXELS), written out: the CLI stays light to import.
MaxPixelsOpt = Annotated[int, typer.Option("--max-pixels", min=1, help="Most pixels an image may declare (or a "
                                                                       "rendered region make); checked before "
                                                                       "decoding.")]

collect_app = typer.Typer(help="Collect figures into a workspace (folder, html, latex, pdf).",
                          no_args_is_help=True)


@collect_app.command("folder")
def folder_cmd(
    ws: WsArg,
    folder: Annotated[Path, typer.Argument(help="Folder of images (read recursively; hidden files skipped).")],
    captions: Annotated[Path | None, typer.Option("--captions", help="CSV with a `file` column (path relative to "
                                                                     "FOLDER, or file name) and caption, "
                                                                     "figure_number, context, page_url, paper_id, "
                                                                     "... columns.")] = None,
    max_pixels: MaxPixelsOpt = 89_478_485,
    title: Annotated[str | None, typer.Option("--title", help="The source's title, as the card and the export's "
                                              "source_title show it (default: the folder's name).")] = None,
    url: Annotated[str | None, typer.Option("--url", help="Where the images come from (http or https), as the "
                                            "export's source_url shows it.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Collect a plain folder of images; corrupt and non-image files are recorded as errors; resumable."""
    with open_workspace(ws) as w, stage_progress(quiet=json_out) as (on_start, on_item):
        from zuhyo.construct.collect.folder import collect_folder

        report = collect_folder(w, folder, captions=captions, max_pixels=max_pixels, on_start=on_start,
                                on_item=on_item, title=title, url=url)
    if json_out:
        emit_json(report.model_dump(mode="json"))
        return
    from rich.markup import escape

    result_console.print(f"{escape(str(folder))}: {report.figures} figures added ({report.documents} new documents), "
                         f"{report.skipped_existing} already there, {report.errors} errors", highlight=False)
    if report.captions_updated:
        result_console.print(f"  captions updated on {report.captions_updated} figures", highlight=False)
    print_item_errors([f"{item.file}: {item.reason}" for item in report.error_items])
    if report.unmatched_captions:
        names = ", ".join(report.unmatched_captions[:10]) + (" ..." if len(report.unmatched_captions) > 10 else "")
        console.print(f"  [yellow]{len(report.unmatched_captions)} caption rows match no file: {escape(names)}[/]",
                      highlight=False)


@collect_app.command("pdf")
def pdf_cmd(
    ws: WsArg,
    files: Annotated[list[Path], typer.Argument(help="PDF files (one document each).")],
    dpi: Annotated[int, typer.Option("--dpi", min=36, max=600, help="Resolution for figures rendered from the "
                                                                    "page (vector regions, merged fragments).")] = 200,
    min_size: Annotated[float, typer.Option("--min-size", min=0, help="Images placed smaller than this (points, "
                                                                      "1/72 inch) on a side are skipped as "
                                                                      "icons or strips.")] = 50.0,
    max_pixels: MaxPixelsOpt = 89_478_485,
    json_out: JsonOpt = False,
) -> None:
    """Collect embedded images and captioned vector figures from PDFs; what is skipped is recorded with why."""
    with open_workspace(ws) as w, stage_progress(quiet=json_out) as (on_start, on_item):
        from zuhyo.construct.collect.pdf import collect_pdfs

        report = collect_pdfs(w, list(files), dpi=dpi, min_side_pt=min_size, max_pixels=max_pixels,
                              on_start=on_start, on_item=on_item)
    if json_out:
        emit_json(report.model_dump(mode="json"))
        return

    result_console.print(f"{len(files)} PDFs: {report.figures} figures added ({report.captioned} with a caption, "
                         f"{report.documents} new documents), {report.skipped_existing} already there, "
                         f"{report.skipped} "
                         f"skipped (icons, banners, frames...), {report.errors} errors", highlight=False)
    print_item_errors([f"{item.file}: {item.reason}" for item in report.error_items])


collect_app.command("html")(html_cmd)
collect_app.command("latex")(latex_cmd)


def register(app: typer.Typer) -> None:
    app.add_typer(collect_app, name="collect")
