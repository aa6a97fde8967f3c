"""`zuhyo export`: a workspace's accepted QA items as a Hugging Face dataset with a dataset card."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, fail, print_item_errors, result_console
from zuhyo.cli.workspace import WsArg, open_workspace


def export_cmd(
    ws: WsArg,
    out: Annotated[Path, typer.Option("--out", help="Folder to write (new, empty, or an earlier export, which is "
                                                    "replaced).")],
    images: Annotated[str, typer.Option("--images", help="embed: image bytes in the rows; url: the image's original "
                                                         "URL and SHA-256 only.")] = "embed",
    include_drafts: Annotated[bool, typer.Option("--include-drafts", help="Export drafts (status draft) too, "
                                                                          "not only accepted items.")] = False,
    skip_missing: Annotated[bool, typer.Option("--skip-missing", help="Leave out (and count) items whose image is "
                                                                      "missing or has no URL, instead of "
                                                                      "failing.")] = False,
    name: Annotated[str | None, typer.Option("--name", help="Dataset name in the rows and the card (default: the "
                                                            "--out folder's name).")] = None,
    split: Annotated[str, typer.Option("--split", help="Split name of the shards.")] = "test",
    license: Annotated[str, typer.Option("--license", help="The dataset's licence for the card (cc-by-4.0, mit, "
                                                           "other ...).")] = "other",
    source_license: Annotated[list[str] | None, typer.Option(
        "--source-license", help="SOURCE_ID=LICENCE for a source whose licence the workspace does not record "
                                 "(repeatable).")] = None,
    language: Annotated[list[str] | None, typer.Option("--language", help="Language code for the card (ja, en; "
                                                                          "repeatable).")] = None,
    max_shard_mb: Annotated[float, typer.Option("--max-shard-mb", min=1, help="Largest Parquet shard (MB, "
                                                                              "estimated).")] = 256.0,
    push_to_hub: Annotated[str | None, typer.Option("--push-to-hub", help="Upload to this Hugging Face dataset "
                                                                          "repository (OWNER/NAME).")] = None,
    token_env: Annotated[str, typer.Option("--token-env", help="Environment variable holding the Hugging Face "
                                                               "token.")] = "HF_TOKEN",
    private: Annotated[bool, typer.Option("--private", help="Create the Hub repository as private.")] = False,
    allow_dry_run: Annotated[bool, typer.Option("--allow-dry-run", help="Export items holding placeholders of the "
                                                                        "dry-run backend (a rehearsal; the card "
                                                                        "says so). Refused by default.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Export accepted QA items as an HF dataset (Parquet shards and save_to_disk) with a generated dataset card."""
    from zuhyo.construct.publish.export import IMAGE_MODES, ExportOptions

    if images not in IMAGE_MODES:
        fail(f"--images must be one of {', '.join(IMAGE_MODES)}, got {images!r}")
    overrides: dict[str, str] = {}
    for item in source_license or []:
        sid, _, lic = item.partition("=")
        if not sid.strip().isdigit() or not lic.strip():
            fail(f"--source-license expects SOURCE_ID=LICENCE, got {item!r}")
        overrides[sid.strip()] = lic.strip()
    opts = ExportOptions(out=out, images=images, include_drafts=include_drafts, skip_missing=skip_missing,
                         name=name, split=split, license=license, source_licenses=overrides,
                         language=tuple(language or ()), max_shard_mb=max_shard_mb,
                         allow_dry_run=allow_dry_run)
    from zuhyo.construct.publish.export import ExportItemsError, export_workspace

    token = None
    if push_to_hub:
        from zuhyo.construct.publish.hub import hub_token

        token = hub_token(push_to_hub, token_env)  # before anything is written

    with open_workspace(ws) as w:
        try:
            report = export_workspace(w, opts, on_phase=None if json_out else
                                      (lambda phase: console.print(f"export: {phase}", highlight=False)))
        except ExportItemsError as e:
            lines = [f"{f.item} (figure {f.figure_id}): {f.reason}" for f in e.failures]
            if json_out:
                emit_json({"items": 0, "errors": len(lines), "error_items": [f.model_dump() for f in e.failures]})
            else:
                print_item_errors(lines)
            fail(f"{len(lines)} items cannot be exported (listed above); fix them or pass --skip-missing")
    if push_to_hub and token:
        from zuhyo.construct.publish.hub import push_to_hub as push

        report.pushed_to = push(out, push_to_hub, token, private=private)
    if json_out:
        emit_json(report.model_dump(mode="json"))
        return
    statuses = ", ".join(f"{n} {k}" for k, n in report.by_status.items())
    result_console.print(f"{report.out}: {report.items} QA items ({statuses}), {report.images} images "
                         f"({report.images_mode}), {len(report.shards)} Parquet shards, card {report.card}",
                         highlight=False)
    if report.dry_run:
        console.print(f"  [yellow]{report.dry_run} items hold dry-run placeholders (--allow-dry-run): a rehearsal, "
                      "not data[/]", highlight=False)
    if report.skipped:
        console.print(f"  [yellow]{report.skipped} items left out (--skip-missing):[/]", highlight=False)
        print_item_errors([f"{f.item} (figure {f.figure_id}): {f.reason}" for f in report.error_items])
    if report.pushed_to:
        result_console.print(f"  pushed to {report.pushed_to}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)
