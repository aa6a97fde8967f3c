"""``zuhyo collect pdf``: embedded images and vector figure regions of PDF files, each with its caption.

One source and one document per PDF; each figure candidate found by :mod:`zuhyo.construct.collect.pdf_regions` is
verified (:func:`zuhyo.images.verify.verify_image`), stored in the workspace's image store and recorded with its
provenance (file, page, bbox in PDF points, how the pixels were made, image XObjects) and its caption and figure
number. What was skipped (icons, blank banners, frames, uncaptioned boxes) is kept with its reason in the
document's ``meta["skipped"]`` and counted. An encrypted or unreadable PDF, or a page or figure that cannot be
read, is a per-item error with its reason, and the stage goes on (whatever mupdf or Pillow raise on it: their
``FzError*`` classes are no ``RuntimeError``); a damaged or truncated PDF that mupdf repairs on reading is also an
error, but what could be read from it is collected. A file is a PDF by its content, not its name, and no image or
region over ``max_pixels`` is decoded or rendered (:mod:`zuhyo.construct.collect.pdf_limits`). Each figure is
committed on its own, and a re-run adds nothing twice (figures are keyed by page, kind and bbox).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from zuhyo.construct.collect.pdf_limits import HEADER_WINDOW, pdf_type_problem
from zuhyo.construct.collect.pdf_regions import DEFAULT_DPI, DEFAULT_MIN_SIDE_PT, Candidate, Skipped, analyse_page
from zuhyo.construct.collect.report import CollectCounts, ItemFailure, error_reason
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.records import (
    add_figure,
    find_figure_row,
    get_or_create_document,
    get_or_create_source,
    record_error,
    resolve_error,
)
from zuhyo.errors import ImageError
from zuhyo.images.verify import DEFAULT_MAX_PIXELS, verify_image
from zuhyo.schema import Figure

STAGE = "collect"
KIND = "pdf"


class PdfCollectReport(CollectCounts):
    """What one ``collect pdf`` run did (counts are for this run); errors are PDFs, pages or figures."""

    skipped: int = 0
    """Images and vector regions that are not figure candidates (each with its reason in ``skipped_items``)."""
    captioned: int = 0
    """Figures found (added or existing) with a caption line."""
    error_items: list[ItemFailure] = Field(default_factory=list)
    skipped_items: list[Skipped] = Field(default_factory=list)


def collect_pdfs(ws: Workspace, files: list[Path | str], *, dpi: int = DEFAULT_DPI,
                 min_side_pt: float = DEFAULT_MIN_SIDE_PT, max_pixels: int = DEFAULT_MAX_PIXELS,
                 on_item: Callable[[str, str], None] | None = None,
                 on_start: Callable[[int], None] | None = None) -> PdfCollectReport:
    """Collect the figures of each PDF in ``files`` into ``ws``; ``on_item(file, outcome)`` follows progress
    per PDF (``outcome`` is ``done`` or ``error``). One PDF that cannot be read, whatever the reason, is one error:
    the run goes on with the next."""
    paths = [Path(f).resolve() for f in files]
    report = PdfCollectReport()
    if on_start is not None:
        on_start(len(paths))
    params = {"collector": KIND, "files": [str(p) for p in paths], "dpi": dpi, "min_side_pt": min_side_pt,
              "max_pixels": max_pixels}
    with ws.run(STAGE, params) as run:
        for path in paths:
            try:
                ok = _collect_file(ws, path, run.id, report, dpi=dpi, min_side_pt=min_side_pt, max_pixels=max_pixels)
            except Exception as e:  # noqa: BLE001 - any failure on one untrusted file is that file's error
                source_id = _source_id(ws, path)
                _fail(ws, report, source_id, run.id, f"source/{source_id}/{path.name}", path.name,
                      f"cannot read the PDF: {error_reason(e)}")
                ok = False
            if on_item is not None:
                on_item(str(path), "done" if ok else "error")
        run.counts = report.model_dump(include={"figures", "documents", "errors", "skipped_existing", "skipped",
                                                "captioned"})
    return report


def _source_id(ws: Workspace, path: Path) -> int:
    return ws.db.write_retrying(lambda s: get_or_create_source(s, KIND, str(path), title=path.name).id)


def _fail(ws: Workspace, report: PdfCollectReport, source_id: int, run_id: int, key: str, locator: str,
          reason: str) -> None:
    ws.db.write_retrying(lambda s: record_error(s, STAGE, key, locator, reason, source_id=source_id, run_id=run_id))
    report.errors += 1
    report.error_items.append(ItemFailure(file=locator, reason=reason))


def _open(path: Path) -> tuple[Any, str | None]:
    """(the PyMuPDF document, None) or (None, the reason it cannot be read)."""
    import pymupdf

    pymupdf.TOOLS.mupdf_warnings(reset=True)  # forget an earlier file's warnings
    if not path.is_file():
        return None, "no such file" if not path.exists() else "not a regular file"
    try:
        with path.open("rb") as fh:
            head = fh.read(HEADER_WINDOW)
    except OSError as e:
        return None, f"cannot read file: {e.strerror or e}"
    problem = pdf_type_problem(head)
    if problem is not None:
        return None, problem
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as e:  # noqa: BLE001 - FileDataError, EmptyFileError, FzError*; OSError: unreadable
        warnings = pymupdf.TOOLS.mupdf_warnings().splitlines()
        if isinstance(e, OSError) and e.strerror:
            return None, f"cannot read file: {e.strerror}"
        return None, "broken PDF or not a PDF: cannot be opened" + (f" ({warnings[0][:200]})" if warnings else "")
    if doc.needs_pass:
        doc.close()
        return None, "encrypted PDF: needs a password"
    warnings = pymupdf.TOOLS.mupdf_warnings().splitlines()
    if doc.page_count == 0:
        doc.close()
        return None, "broken or truncated PDF: no readable page" + (f" ({warnings[0][:200]})" if warnings else "")
    if doc.is_repaired:
        return doc, ("damaged or truncated PDF, repaired on reading" + (f" ({warnings[0][:200]})" if warnings else "")
                     + ": collected what could be read")
    return doc, None


def _pages(doc: Any) -> list[tuple[int, Any, list[dict[str, Any]] | None, str | None]]:
    """(number, page, its drawings, None) for each page, or (number, None, None, why) for a page that cannot be
    loaded or read (a page tree whose ``/Count`` lies, a cycle, a damaged content stream)."""
    out: list[tuple[int, Any, list[dict[str, Any]] | None, str | None]] = []
    for i in range(doc.page_count):
        try:
            page = doc.load_page(i)
            out.append((i + 1, page, page.get_drawings(), None))
        except Exception as e:  # noqa: BLE001 - ValueError, RuntimeError, FzError*: this page's error
            out.append((i + 1, None, None, error_reason(e)))
    return out


def _collect_file(ws: Workspace, path: Path, run_id: int, report: PdfCollectReport, *, dpi: int,
                  min_side_pt: float, max_pixels: int) -> bool:
    from zuhyo.construct.collect.pdf_regions import furniture_keys

    source_id = _source_id(ws, path)
    file_key = f"source/{source_id}/{path.name}"
    doc, damaged = _open(path)
    if doc is None:
        _fail(ws, report, source_id, run_id, file_key, path.name, damaged or "")
        return False
    ok = damaged is None
    with doc:
        pages = _pages(doc)
        if all(page is None for _, page, _, _ in pages):
            _fail(ws, report, source_id, run_id, file_key, path.name, f"cannot read any page: {pages[0][3]}")
            return False
        furniture = furniture_keys([d for _, _, d, _ in pages if d is not None])
        if damaged is None:
            ws.db.write_retrying(lambda s: resolve_error(s, STAGE, file_key))
        skipped: list[Skipped] = []
        found: list[Candidate] = []
        for number, page, drawings, why in pages:
            page_key = f"{file_key}#page{number}"
            try:
                result = None if page is None or drawings is None else analyse_page(
                    page, drawings, furniture, min_side_pt=min_side_pt, dpi=dpi, max_pixels=max_pixels)
            except Exception as e:  # noqa: BLE001 - whatever mupdf raises on this page: the page's error
                why = error_reason(e)
                result = None
            if result is None:
                _fail(ws, report, source_id, run_id, page_key, f"{path.name} page {number}",
                      f"cannot read the page: {why}")
                ok = False
                continue
            skipped += result.skipped
            found += result.candidates
            for locator, reason in result.errors:
                _fail(ws, report, source_id, run_id, f"{file_key}#{locator}", f"{path.name} {locator}", reason)
                ok = False
        title = (doc.metadata or {}).get("title") or path.stem
        meta = {"pages": doc.page_count, "skipped": [k.model_dump(mode="json") for k in skipped]}
    report.skipped += len(skipped)
    report.skipped_items += skipped

    def document(s: Session) -> tuple[int, bool]:
        row, created = get_or_create_document(s, source_id, path.name, title=title, meta=meta)
        if not created and row.meta != meta:
            row.meta = meta
        return row.id, created

    document_id, created = ws.db.write_retrying(document)
    report.documents += int(created)
    for cand in found:
        ok = _store(ws, path, cand, document_id, source_id, run_id, report) and ok
    if damaged is not None:  # counted, and kept until a repaired copy is collected
        _fail(ws, report, source_id, run_id, file_key, path.name, damaged)
    return ok


def _store(ws: Workspace, path: Path, cand: Candidate, document_id: int, source_id: int, run_id: int,
           report: PdfCollectReport) -> bool:
    report.captioned += cand.caption is not None
    key = f"source/{source_id}/{path.name}#{cand.locator}"
    with ws.db.read() as s:
        if find_figure_row(s, document_id, cand.locator) is not None:
            report.skipped_existing += 1
            return True
    try:
        info = verify_image(cand.png)
    except ImageError as e:
        _fail(ws, report, source_id, run_id, key, f"{path.name} {cand.locator}", str(e))
        return False
    sha, _ = ws.images.put(cand.png, info.suffix)  # before the row: a crash in between leaves only an unused file
    provenance = {"collector": KIND, "file": path.name, "path": str(path), "page": cand.page,
                  "bbox": [round(v, 2) for v in cand.bbox], "kind": cand.kind, "how": cand.how}
    if cand.xrefs:
        provenance["xrefs"] = cand.xrefs
    fields: dict[str, Any] = {}
    if cand.caption is not None:
        fields = {"caption": cand.caption.text, "figure_number": cand.caption.caption.figure_number}
        provenance["caption_label"] = cand.caption.caption.label
        provenance["caption_bbox"] = [round(v, 2) for v in cand.caption.bbox]
    if cand.source is not None:
        provenance["source"] = cand.source
    figure = Figure(sha256=sha, locator=cand.locator, page=str(cand.page), width=info.width, height=info.height,
                    mime=info.mime, provenance=provenance, **fields)

    def insert(s: Session) -> bool:
        if find_figure_row(s, document_id, cand.locator) is not None:  # another process collected it meanwhile
            return False
        add_figure(s, document_id, figure, run_id)
        resolve_error(s, STAGE, key)
        return True

    if ws.db.write_retrying(insert):
        report.figures += 1
    else:
        report.skipped_existing += 1
    return True
