"""``zuhyo collect latex``: figures from arXiv LaTeX sources (folders or tarballs), DomainCQA §4.1.

DomainCQA §4.1 builds its chart pool from the visual assets of arXiv papers; its chart-abstract selection
(§3.1, Algorithm 2, steps 4 and 6) starts by extracting each chart's caption and surrounding description and
the paper's abstract and conclusion. This collector gathers all of that from the LaTeX source. Per source:

1. open it (a folder, or a tarball safely extracted: :mod:`zuhyo.construct.collect.latex_source`), find the main
   ``.tex`` file and inline its ``\\input``/``\\include`` files;
2. parse the figures (:mod:`zuhyo.construct.collect.latex_paper`): one figure per graphic file, sharing the
   environment's caption, number and labels, with a sub-index; citing paragraphs as context;
3. per graphic: find the file, rasterise PDF/EPS to PNG (:mod:`zuhyo.construct.collect.latex_images`), verify it,
   store it, record it; each committed on its own.

The paper is one source (kind ``latex``, the path) with one document (its paper id) whose ``meta`` keeps the
title, abstract and conclusion. A missing figure file, a figure that does not parse, an ``\\input`` that is
missing or loops: a per-item error with the reason, and the stage goes on. A re-run skips recorded figures and
retries failed ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.collect.latex_images import GRAPHIC_SUFFIXES, load_graphic
from zuhyo.construct.collect.latex_paper import Paper, PaperFigure, parse_paper
from zuhyo.construct.collect.latex_source import (
    MAX_TOTAL_BYTES,
    find_main_file,
    inline_includes,
    opened_source,
    paper_id_from_name,
    resolve_in,
)
from zuhyo.construct.collect.latex_text import LatexSyntaxError
from zuhyo.construct.collect.paper_selection import PaperSelection, SelectionSummary
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
from zuhyo.construct.workspace.scratch import scratch_dir
from zuhyo.construct.workspace.tables import FigureRow
from zuhyo.errors import DataError, ImageError
from zuhyo.images.verify import DEFAULT_MAX_BYTES, DEFAULT_MAX_PIXELS, verify_image
from zuhyo.schema import Figure

STAGE = "collect"
KIND = "latex"


class LatexCollectReport(CollectCounts):
    """What one ``collect latex`` run did (counts are for this run); errors are figures, include files or
    whole sources."""

    figure_environments: int = 0
    """``figure``/``figure*`` environments and figure-set groups found in the sources."""
    papers: list[str] = Field(default_factory=list)
    """Paper ids, in the order of the sources."""
    skipped_members: list[str] = Field(default_factory=list)
    """Tarball members not extracted (links, paths leaving the archive), with why."""
    error_items: list[ItemFailure] = Field(default_factory=list)
    selection: SelectionSummary | None = None
    """With a paper list (``--papers``): what the selection kept and skipped."""


def collect_latex(ws: Workspace, sources: Sequence[Path | str], *, paper_id: str | None = None,
                  max_pixels: int = DEFAULT_MAX_PIXELS, max_bytes: int = DEFAULT_MAX_BYTES,
                  max_archive_bytes: int = MAX_TOTAL_BYTES, papers: Mapping[str, PaperSelection] | None = None,
                  on_item: Callable[[str, str], None] | None = None) -> LatexCollectReport:
    """Collect the figures of each LaTeX source into ``ws``; ``on_item(item, outcome)`` follows progress.

    ``outcome`` is ``added``, ``existing`` or ``error``. ``paper_id`` overrides the id taken from the name
    (one source only). ``papers`` (:func:`zuhyo.construct.collect.paper_selection.select_papers`): only sources
    whose paper is listed and inside the year range are collected, each paper's selection (year, citations, rank,
    top cited) recorded as provenance in its document's ``meta["selection"]``; ``zuhyo abstracts`` then votes on
    the top-cited papers only (DomainCQA §4.2). Raises :class:`DataError` when a source path does not exist
    (nothing recorded then).
    """
    paths = [Path(s).resolve() for s in sources]
    if paper_id is not None and len(paths) != 1:
        raise DataError(f"--paper-id names one paper, but {len(paths)} sources were given")
    for p in paths:
        if not p.exists():
            raise DataError(f"{p}: not found")
    report = LatexCollectReport()
    params: dict[str, Any] = {"collector": KIND, "sources": [str(p) for p in paths], "paper_id": paper_id}
    if papers is not None:
        first = next(iter(papers.values()), None)
        params["selection"] = {"papers_csv": first.papers_csv if first else "", "rule": first.rule if first else ""}
        report.selection = SelectionSummary(listed=len(papers), in_years=sum(p.in_years for p in papers.values()),
                                            top_cited=sorted(i for i, p in papers.items() if p.top_cited))
    limits = {"max_pixels": max_pixels, "max_bytes": max_bytes}
    with ws.run(STAGE, params) as run:
        for path in paths:
            pid = paper_id or paper_id_from_name(path)
            chosen = papers.get(pid) if papers is not None else None
            if papers is not None and report.selection is not None and (chosen is None or not chosen.in_years):
                (report.selection.not_listed if chosen is None else report.selection.out_of_years).append(pid)
                if on_item is not None:
                    on_item(str(path), "skipped")
                continue
            report.papers.append(pid)
            _Paper(ws, path, pid, run.id, report, limits, chosen).collect(max_archive_bytes, on_item)
        run.counts = report.model_dump(include={"figures", "documents", "errors", "skipped_existing",
                                                "figure_environments"})
    return report


class _Paper:
    """One source being collected: its source row, its document, the report."""

    def __init__(self, ws: Workspace, path: Path, paper_id: str, run_id: int, report: LatexCollectReport,
                 limits: dict[str, int], selection: PaperSelection | None = None) -> None:
        self.ws, self.path, self.paper_id, self.run_id, self.report, self.limits = (
            ws, path, paper_id, run_id, report, limits)
        self.selection = selection
        self.source_id: int = ws.db.write_retrying(
            lambda s: get_or_create_source(s, KIND, str(path), title=paper_id).id)

    def fail(self, locator: str, reason: str) -> str:
        key = f"source/{self.source_id}/{self.paper_id}/{locator}"
        self.ws.db.write_retrying(lambda s: record_error(s, STAGE, key, f"{self.paper_id}: {locator}", reason,
                                                         source_id=self.source_id, run_id=self.run_id))
        self.report.errors += 1
        self.report.error_items.append(ItemFailure(file=f"{self.paper_id}: {locator}", reason=reason))
        return "error"

    def succeeded(self, s: Session, locator: str) -> None:
        resolve_error(s, STAGE, f"source/{self.source_id}/{self.paper_id}/{locator}")

    def collect(self, max_archive_bytes: int, on_item: Callable[[str, str], None] | None) -> None:
        try:
            with scratch_dir(self.ws.root, "latex-") as tmp, opened_source(self.path, max_archive_bytes, tmp) as src:
                self.report.skipped_members += [f"{self.path.name}: {m}" for m in src.skipped]
                main = find_main_file(src.root)
                inlined = inline_includes(src.root, main)
                paper = parse_paper(inlined.text)
                self.ws.db.write_retrying(lambda s: self.succeeded(s, "source"))
                for message in inlined.errors:
                    item = f"include {message.split(':', 1)[0]}"
                    outcome = self.fail(item, message)
                    if on_item is not None:
                        on_item(f"{self.paper_id}: {item}", outcome)
                doc_id = self._document(paper, main.relative_to(src.root).as_posix(), inlined.files)
                self.report.figure_environments += len(paper.figures)
                with self.ws.db.read() as s:
                    existing = set(s.scalars(select(FigureRow.locator).where(FigureRow.document_id == doc_id)))
                for fig in paper.figures:
                    self._figure(src.root, paper, fig, doc_id, existing, on_item)
        except (DataError, OSError, LatexSyntaxError) as e:
            reason = (f"cannot read the source: {e.strerror or e}" if isinstance(e, OSError)
                      else f"does not parse: {e}" if isinstance(e, LatexSyntaxError) else str(e))
            outcome = self.fail("source", reason)
            if on_item is not None:
                on_item(str(self.path), outcome)
        except Exception as e:  # noqa: BLE001 - whatever one hostile source raises is that source's error
            outcome = self.fail("source", f"cannot read the source: {error_reason(e)}")
            if on_item is not None:
                on_item(str(self.path), outcome)

    def _document(self, paper: Paper, main: str, files: list[str]) -> int:
        meta: dict[str, Any] = {"title": paper.title, "abstract": paper.abstract, "conclusion": paper.conclusion,
                                "conclusion_heading": paper.conclusion_heading, "main_file": main,
                                "tex_files": files, "problems": paper.problems}
        if self.selection is not None:
            meta["selection"] = self.selection.model_dump()

        def write(s: Session) -> tuple[int, bool]:
            doc, created = get_or_create_document(s, self.source_id, self.paper_id, title=paper.title,
                                                  paper_id=self.paper_id, meta=meta)
            if doc.meta != meta:
                doc.meta, doc.title = meta, paper.title
            return doc.id, created

        doc_id, created = self.ws.db.write_retrying(write)
        self.report.documents += int(created)
        return doc_id

    def _figure(self, root: Path, paper: Paper, fig: PaperFigure, doc_id: int, existing: set[str],
                on_item: Callable[[str, str], None] | None) -> None:
        if fig.error is not None:
            outcome = self.fail(fig.key, fig.error)
            if on_item is not None:
                on_item(f"{self.paper_id}: {fig.key}", outcome)
            return
        for k, graphic in enumerate(fig.graphics, 1):
            locator = f"{fig.key}/{k}/{graphic.file}"
            if locator in existing:
                self.report.skipped_existing += 1
                outcome = "existing"
            else:
                outcome = self._graphic(root, paper, fig, k, graphic.file, graphic.subcaption, locator, doc_id)
            if on_item is not None:
                on_item(f"{self.paper_id}: {locator}", outcome)

    def _graphic(self, root: Path, paper: Paper, fig: PaperFigure, k: int, file: str, subcaption: str | None,
                 locator: str, doc_id: int) -> str:
        shown = f"figure {fig.figure_number or fig.key}: {file}"
        path = resolve_in(root, file, GRAPHIC_SUFFIXES, paper.graphicspath)
        if path is None:
            return self.fail(locator, f"{shown}: file not found in the source")
        try:
            graphic = load_graphic(path, self.limits["max_bytes"], self.limits["max_pixels"])
            info = verify_image(graphic.data, max_pixels=self.limits["max_pixels"],
                                max_bytes=max(self.limits["max_bytes"], len(graphic.data)))
        except ImageError as e:
            return self.fail(locator, f"{shown}: {e}")
        except OSError as e:
            return self.fail(locator, f"{shown}: cannot read file: {e.strerror or e}")
        except Exception as e:  # noqa: BLE001 - a decoder's failure on one hostile file is that figure's error
            return self.fail(locator, f"{shown}: {error_reason(e)}")
        sha, _ = self.ws.images.put(graphic.data, info.suffix)
        provenance: dict[str, Any] = {
            "collector": KIND, "file": path.relative_to(root.resolve()).as_posix(), "written_as": file,
            "source_format": graphic.source_format, "rasterised": graphic.rasterised, "figure_key": fig.key,
            "sub_index": k, "graphics_in_figure": len(fig.graphics), "labels": fig.labels,
            **({"subcaption": subcaption} if subcaption else {}), **fig.extra}
        if graphic.rasterised:
            provenance["pages"] = graphic.pages
        figure = Figure(sha256=sha, locator=locator, caption=fig.caption, figure_number=fig.figure_number,
                        context=fig.context, section=fig.section, paper_id=self.paper_id, width=info.width,
                        height=info.height, mime=info.mime, provenance=provenance)

        def insert(s: Session) -> bool:
            if find_figure_row(s, doc_id, locator) is not None:  # another process collected it meanwhile
                return False
            add_figure(s, doc_id, figure, self.run_id)
            self.succeeded(s, locator)
            return True

        if not self.ws.db.write_retrying(insert):
            self.report.skipped_existing += 1
            return "existing"
        self.report.figures += 1
        return "added"
