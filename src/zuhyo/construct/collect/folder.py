"""``zuhyo collect folder``: a plain folder of images, the commonest source of all.

Every file under the folder (recursively; hidden files and folders skipped) is one item: verified with
:func:`zuhyo.images.verify.verify_image` (a corrupt, truncated, huge or non-image file becomes a per-item error
with its reason, and the stage goes on), stored in the workspace's image store, and recorded as a figure of the
document for its sub-folder. Each item is committed on its own, so a kill loses at most the item in hand, and a
re-run skips the files already recorded (by folder and relative path) and retries the ones that failed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.collect.captions import match_captions, read_captions
from zuhyo.construct.collect.paths import inside
from zuhyo.construct.collect.report import CollectCounts, ItemFailure
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.records import (
    add_figure,
    find_figure_row,
    get_or_create_document,
    get_or_create_source,
    record_error,
    resolve_error,
    update_figure,
)
from zuhyo.construct.workspace.tables import Document, FigureRow
from zuhyo.errors import DataError, ImageError
from zuhyo.images.fetch import check_url
from zuhyo.images.verify import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS, verify_image
from zuhyo.schema import Figure

STAGE = "collect"
KIND = "folder"
ROOT_DOCUMENT = "."


class CollectReport(CollectCounts):
    """What one ``collect folder`` run did (counts are for this run)."""

    captions_updated: int = 0
    """Figures already in the workspace whose caption fields the CSV changed."""
    unmatched_captions: list[str] = Field(default_factory=list)
    """CSV ``file`` values that match no file in the folder."""
    error_items: list[ItemFailure] = Field(default_factory=list)


def list_files(folder: Path, exclude: set[Path], exclude_dirs: tuple[Path, ...] = ()) -> list[str]:
    """Relative POSIX paths of the regular files under ``folder`` (and of links to files), sorted.

    Hidden files and folders are skipped, and so are the files in ``exclude`` and under ``exclude_dirs``
    (the workspace itself, when it lies inside the folder). A link is listed (and refused by
    :func:`_collect_one` when it leaves the folder), so that it is counted as an error, not dropped.
    """
    out = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or not (p.is_file() or p.is_symlink()):
            continue
        resolved = p.resolve()
        if resolved in exclude or any(resolved.is_relative_to(d) for d in exclude_dirs):
            continue
        out.append(rel.as_posix())
    return sorted(out)


def collect_folder(ws: Workspace, folder: Path | str, *, captions: Path | str | None = None,
                   max_pixels: int = DEFAULT_MAX_PIXELS, max_bytes: int = DEFAULT_MAX_BYTES,
                   on_item: Callable[[str, str], None] | None = None,
                   on_start: Callable[[int], None] | None = None, title: str | None = None,
                   url: str | None = None) -> CollectReport:
    """Collect every image under ``folder`` into ``ws``; ``on_item(file, outcome)`` follows progress.

    ``title`` and ``url`` name the source the images come from (the card and the export's ``source_title`` /
    ``source_url`` show them; without them the folder's name stands for the title); given on a re-run, they
    replace the earlier ones.

    ``outcome`` is ``added``, ``existing`` or ``error``. Raises :class:`DataError` when the folder or the
    captions CSV cannot be read at all (nothing is recorded then).
    """
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise DataError(f"{folder} is not a folder")
    given = {k: v.strip() for k, v in (("title", title), ("url", url)) if v and v.strip()}
    if "url" in given and (why := check_url(given["url"])) is not None:
        raise DataError(f"--url {given['url']!r} is not an http(s) URL: {why}")
    caption_path = Path(captions).resolve() if captions is not None else None
    files = list_files(folder, {caption_path} if caption_path else set(),
                       (ws.root.resolve(), ws.images.root.resolve()))
    report = CollectReport()
    by_file: dict[str, dict[str, Any]] = {}
    if caption_path is not None:
        by_file, report.unmatched_captions = match_captions(read_captions(caption_path), files)
    if on_start is not None:
        on_start(len(files))
    params = {"collector": KIND, "folder": str(folder), "captions": str(caption_path) if caption_path else None,
              "title": title, "url": url}
    with ws.run(STAGE, params) as run:
        def source(s: Session) -> int:
            row = get_or_create_source(s, KIND, str(folder), title=folder.name)
            if any((row.meta or {}).get(k) != v for k, v in given.items()):
                row.meta = {**(row.meta or {}), **given}
            return row.id

        source_id = ws.db.write_retrying(source)
        with ws.db.read() as s:
            existing = {(doc, fig) for doc, fig in s.execute(
                select(Document.locator, FigureRow.locator).join(FigureRow, FigureRow.document_id == Document.id)
                .where(Document.source_id == source_id))}
        for rel in files:
            doc_locator = rel.rsplit("/", 1)[0] if "/" in rel else ROOT_DOCUMENT
            fields = by_file.get(rel, {})
            if (doc_locator, rel) in existing:
                report.skipped_existing += 1
                if fields and _update_captions(ws, source_id, doc_locator, rel, fields):
                    report.captions_updated += 1
                outcome = "existing"
            else:
                outcome = _collect_one(ws, folder, rel, doc_locator, fields, source_id, run.id, report,
                                       max_pixels=max_pixels, max_bytes=max_bytes)
            if on_item is not None:
                on_item(rel, outcome)
        run.counts = report.model_dump(include={"figures", "documents", "errors", "skipped_existing",
                                                "captions_updated"})
    return report


def _collect_one(ws: Workspace, folder: Path, rel: str, doc_locator: str, fields: dict[str, Any], source_id: int,
                 run_id: int, report: CollectReport, *, max_pixels: int, max_bytes: int) -> str:
    item_key = f"source/{source_id}/{rel}"
    try:
        path = folder / rel
        if not inside(folder, path):  # never read through a link out of the folder (nor quote what is there)
            raise ImageError("a link to a file outside the folder (or a broken link); not read")
        size = path.stat().st_size
        if size > max_bytes:
            raise ImageError(f"file is {size:,} bytes, over the {max_bytes:,}-byte limit")
        data = path.read_bytes()
        info = verify_image(data, max_pixels=max_pixels, max_bytes=max_bytes)
    except (ImageError, OSError) as e:
        reason = str(e) if isinstance(e, ImageError) else f"cannot read file: {e.strerror or e}"
        ws.db.write_retrying(lambda s: record_error(s, STAGE, item_key, rel, reason, source_id=source_id,
                                                    run_id=run_id))
        report.errors += 1
        report.error_items.append(ItemFailure(file=rel, reason=reason))
        return "error"
    sha, _ = ws.images.put(data, info.suffix)  # before the row: a crash in between leaves only an unused file
    provenance = {"collector": KIND, "file": rel, "bytes": len(data), "format": info.format,
                  **fields.get("provenance", {})}
    figure = Figure(sha256=sha, locator=rel, width=info.width, height=info.height, mime=info.mime,
                    **{**fields, "provenance": provenance})

    def insert(s: Session) -> tuple[bool, bool]:
        doc, created = get_or_create_document(s, source_id, doc_locator,
                                              title=folder.name if doc_locator == ROOT_DOCUMENT else doc_locator)
        if find_figure_row(s, doc.id, rel) is not None:  # another process collected it meanwhile
            return False, created
        add_figure(s, doc.id, figure, run_id)
        resolve_error(s, STAGE, item_key)
        return True, created

    # A concurrent run (PostgreSQL) may insert the same document or figure first: the retry then finds it.
    added, created = ws.db.write_retrying(insert)
    report.documents += int(created)
    if not added:
        report.skipped_existing += 1
        return "existing"
    report.figures += 1
    return "added"


def _update_captions(ws: Workspace, source_id: int, doc_locator: str, rel: str, fields: dict[str, Any]) -> bool:
    with ws.db.write() as s:
        doc = s.scalar(select(Document).where(Document.source_id == source_id, Document.locator == doc_locator))
        row = find_figure_row(s, doc.id, rel) if doc is not None else None
        if row is None:
            return False
        wanted = {k: v for k, v in fields.items() if k != "provenance"}
        if "provenance" in fields:
            wanted["provenance"] = {**row.provenance, **fields["provenance"]}
        return update_figure(row, wanted)
