"""`zuhyo demo build`: the whole construction loop offline, as a rehearsal with placeholders.

From bundled material only (no network, no key, no model): a workspace is made, three kinds of source are
collected — a small LaTeX paper whose figures are charts of the bundled ``sample-astro`` benchmark, a one-page PDF
holding a ``sample-ja`` chart, and a folder of ``sample-ja`` charts — then filter → classify → complexity → sample
(Gibbs) → abstracts → draft (astro style) → audit, all model stages answered by the ``dry-run`` backend
(:mod:`zuhyo.models.dry_run`: schema-valid placeholders); scripted experts review every draft through the real
review workflow (:mod:`zuhyo.annotate.scripted`); the export is tried without ``allow_dry_run`` (it must refuse),
then made with it; the export is evaluated as ``--bench local`` and reported.

Every stage hands its one-line result and the command to look further to ``on_stage``. The placeholders are
recorded under the model ``dry-run``, so they can never reach a real dataset unnoticed.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from zuhyo.errors import DataError
from zuhyo.models.dry_run import SPEC as DRY_RUN

#: Bundled charts used as the LaTeX paper's figures (sample-astro) and as the PDF page and folder (sample-ja).
LATEX_CHARTS = ("astro_hubble.png", "astro_hr.png", "astro_rotation.png", "astro_spectrum.png", "astro_cmd.png")
PDF_CHART = "ja_bar_09.png"
FOLDER_CHARTS = ("ja_line_01.png", "ja_pie_01.png", "ja_bar_02.png")

PAPER = r"""\documentclass{article}
\usepackage{graphicx}
\title{A rehearsal paper on galaxies and stars}
\begin{document}
\maketitle
\begin{abstract}
This bundled paper exists so that zuhyo demo build has a LaTeX source to collect. We show how galaxies recede
with distance, how stars populate the Hertzsprung-Russell diagram and how galaxies rotate.
\end{abstract}
\section{Results}
%(cites)s

%(figures)s
\section{Conclusions}
Galaxies recede faster the farther they are; rotation curves stay flat at large radii.
\end{document}
"""

CAPTIONS = ("Recession velocity against distance for nearby galaxies.",
            "Hertzsprung-Russell diagram of nearby stars.",
            "Rotation curve of a spiral galaxy.",
            "Optical spectrum of a quasar.",
            "Colour-magnitude diagram of a globular cluster.")


class StageLine(BaseModel):
    """One stage's result as the demo prints it."""

    stage: str
    """The stage's name (``collect latex``, ``filter``, ...)."""
    summary: str
    """Its one-line result."""
    look: str = ""
    """The command (or file) that shows more."""
    seconds: float = 0.0
    """How long the stage took."""
    counts: dict[str, Any] = Field(default_factory=dict)
    """The stage's main numbers (machine-readable)."""


class BuildDemoResult(BaseModel):
    """What `zuhyo demo build` did."""

    out: str
    """The demo's folder."""
    workspace: str
    """The workspace folder (``OUT/ws``)."""
    export: str
    """The exported dataset (``OUT/export``)."""
    report: str | None
    """The report's index.html of the evaluation of the export (None with ``report=False``)."""
    stages: list[StageLine]
    """Each stage's result, in order."""
    seconds: float
    """Wall time of the whole demo."""


@dataclass
class _Steps:
    on_stage: Callable[[StageLine], None] | None
    lines: list[StageLine] = field(default_factory=list)

    def add(self, stage: str, summary: str, look: str, started: float, **counts: Any) -> None:
        import time

        line = StageLine(stage=stage, summary=summary, look=look, seconds=round(time.monotonic() - started, 2),
                         counts=counts)
        self.lines.append(line)
        if self.on_stage is not None:
            self.on_stage(line)


def _bundled(benchmark: str, name: str) -> Path:
    path = Path(str(resources.files("zuhyo.benchmarks") / "data" / benchmark / "images" / name))
    if not path.is_file():
        raise DataError(f"bundled chart {benchmark}/images/{name} is missing from the installed package")
    return path


def write_sources(root: Path) -> dict[str, Path]:
    """The demo's three sources under ``root``: ``latex`` (a folder with main.tex), ``pdf`` (one page), ``folder``."""
    latex = root / "paper"
    latex.mkdir(parents=True, exist_ok=True)
    figures, cites = [], []
    for i, (name, caption) in enumerate(zip(LATEX_CHARTS, CAPTIONS, strict=True), 1):
        shutil.copyfile(_bundled("sample-astro", name), latex / f"f{i}.png")
        figures.append(f"\\begin{{figure}}\\includegraphics{{f{i}.png}}\\caption{{{caption}}}"
                       f"\\label{{fig:f{i}}}\\end{{figure}}")
        cites.append(f"Figure~\\ref{{fig:f{i}}} shows {caption[0].lower()}{caption[1:-1]}.")
    (latex / "main.tex").write_text(PAPER % {"cites": "\n\n".join(cites), "figures": "\n".join(figures)},
                                    encoding="utf-8")
    folder = root / "folder"
    folder.mkdir(exist_ok=True)
    for name in FOLDER_CHARTS:
        shutil.copyfile(_bundled("sample-ja", name), folder / name)
    pdf = root / "whitepaper.pdf"
    _write_pdf(pdf, _bundled("sample-ja", PDF_CHART))
    return {"latex": latex, "pdf": pdf, "folder": folder}


def _write_pdf(path: Path, chart: Path) -> None:
    """A one-page PDF with a heading, a paragraph, the chart and its caption (PyMuPDF, of the [build] extra)."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)  # A4 in points
    page.insert_text((56, 70), "Chapter 1  A rehearsal white paper", fontsize=16)
    page.insert_text((56, 100), "This page exists so that zuhyo demo build has a PDF to collect.", fontsize=10)
    page.insert_image(pymupdf.Rect(56, 130, 539, 480), filename=str(chart))
    page.insert_text((56, 500), "Figure 1-1  A bar chart bundled with zuhyo (sample-ja).", fontsize=10)
    doc.save(str(path))
    doc.close()


def run_build_demo(out: Path, *, report: bool = True, on_stage: Callable[[StageLine], None] | None = None
                   ) -> BuildDemoResult:
    """The rehearsal into ``out`` (``out/sources``, ``out/ws``, ``out/export``, ``out/run``, ``out/report``)."""
    import time

    from zuhyo.construct.workspace import Workspace

    begun = time.monotonic()
    if out.exists() and any(out.iterdir()):
        raise DataError(f"--out {out} is not empty; choose a new folder (the demo starts from nothing)")
    out.mkdir(parents=True, exist_ok=True)
    steps = _Steps(on_stage)
    t = time.monotonic()
    ws_dir = out / "ws"
    sources = write_sources(out / "sources")
    with Workspace.init(ws_dir) as ws:
        steps.add("init", f"workspace {ws_dir} ({ws.db.backend}, migration {ws.revision()})",
                  f"zuhyo status {ws_dir}", t)
        _collect(ws, sources, steps, ws_dir)
        _select(ws, steps, ws_dir)
        _qa(ws, steps, ws_dir)
        export_dir = _export(ws, steps, out / "export")
    report_index = _evaluate(export_dir, out, steps, report)
    return BuildDemoResult(out=str(out), workspace=str(ws_dir), export=str(export_dir), report=report_index,
                           stages=steps.lines, seconds=round(time.monotonic() - begun, 2))


def _collect(ws: Any, sources: dict[str, Path], steps: _Steps, ws_dir: Path) -> None:
    import time

    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.collect.latex import collect_latex
    from zuhyo.construct.collect.pdf import collect_pdfs
    from zuhyo.construct.filter.stage import run_filter

    look = f"zuhyo figures {ws_dir}"
    t = time.monotonic()
    latex = collect_latex(ws, [sources["latex"]], paper_id="rehearsal-paper")
    steps.add("collect latex", f"{latex.figures} figures from 1 paper, {latex.errors} errors", look, t,
              figures=latex.figures, errors=latex.errors)
    t = time.monotonic()
    pdf = collect_pdfs(ws, [sources["pdf"]])
    steps.add("collect pdf", f"{pdf.figures} figures from 1 page ({pdf.captioned} captioned), {pdf.errors} errors",
              look, t, figures=pdf.figures, errors=pdf.errors)
    t = time.monotonic()
    folder = collect_folder(ws, sources["folder"], title="Rehearsal charts (made by zuhyo demo build)")
    steps.add("collect folder", f"{folder.figures} figures, {folder.errors} errors", look, t,
              figures=folder.figures, errors=folder.errors)
    t = time.monotonic()
    filt = run_filter(ws)
    dropped = ", ".join(f"{n} {k}" for k, n in filt.dropped.items() if n) or "none"
    steps.add("filter", f"{filt.kept} of {filt.checked} kept; dropped: {dropped}",
              f"zuhyo figures {ws_dir} --stage filter --decision drop", t, kept=filt.kept, checked=filt.checked)


def _backend(voter: str = "") -> Any:
    from zuhyo.models.base import build_backend

    return build_backend(f"{DRY_RUN}:{voter}" if voter else DRY_RUN)


def _select(ws: Any, steps: _Steps, ws_dir: Path) -> None:
    import time

    from zuhyo.construct.select.classify import IMAGE_TYPE_TASK
    from zuhyo.construct.select.complexity import CCV_TASK
    from zuhyo.construct.select.labelling import run_labelling
    from zuhyo.construct.select.sample_stage import sample_workspace
    from zuhyo.construct.workspace.labels import current_ccvs

    for task, name in ((IMAGE_TYPE_TASK, "classify"), (CCV_TASK, "complexity")):
        t = time.monotonic()
        rep = run_labelling(ws, task, _backend())
        steps.add(name, f"{rep.labelled} figures labelled by {rep.model} (placeholders), {rep.errors} errors",
                  f"zuhyo figures {ws_dir} --json", t, labelled=rep.labelled, errors=rep.errors)
    t = time.monotonic()
    sample = sample_workspace(ws, max(1, len(current_ccvs(ws)) // 2), seed=0)
    steps.add("sample", f"{sample.n} of {sample.pool} charts by Gibbs sampling; joint CCV TVD "
              f"{sample.tvd_joint:.3f} (uniform random: {sample.random_tvd_joint:.3f})",
              f"zuhyo sample {ws_dir} --n {sample.n} --seed 0", t, n=sample.n, pool=sample.pool)


def _qa(ws: Any, steps: _Steps, ws_dir: Path) -> None:
    import time

    from sqlalchemy import select

    from zuhyo.annotate.scripted import accept_by_script
    from zuhyo.construct.qa.abstracts import run_abstracts
    from zuhyo.construct.qa.audit import run_audit
    from zuhyo.construct.qa.drafting import run_drafting
    from zuhyo.construct.workspace.qa_tables import QAFlag, QAItemRow
    from zuhyo.evaluate.judges import build_judge

    t = time.monotonic()
    abstracts = run_abstracts(ws, [_backend("a"), _backend("b")])
    steps.add("abstracts", f"{abstracts.papers} documents, {abstracts.skipped} skipped (under 2 charts): "
              f"{abstracts.majority} chart abstract(s) chosen by 2 voters, {abstracts.errors} errors",
              f"zuhyo status {ws_dir}", t, papers=abstracts.papers, chosen=abstracts.majority)
    t = time.monotonic()
    draft = run_drafting(ws, _backend(), "astro")
    rejected = sum(draft.rejected.values())
    steps.add("draft", f"{draft.drafted} QA items drafted for {draft.figures} figures ({draft.abstracts} "
              f"abstracts), {rejected} rejected, {draft.errors} errors", f"zuhyo status {ws_dir}", t,
              drafted=draft.drafted, errors=draft.errors)
    t = time.monotonic()
    audit = run_audit(ws, [_backend()], build_judge("auto"))
    flags = ", ".join(f"{n} {k}" for k, n in audit.flags.items() if n) or "none"
    steps.add("audit", f"{audit.items} QA items asked with and without the image; flags: {flags}",
              f"zuhyo status {ws_dir}", t, items=audit.items, errors=audit.errors)
    t = time.monotonic()
    with ws.db.read() as s:
        flagged = set(s.scalars(select(QAFlag.qa_item_id)))
        drafts = [i for i in s.scalars(select(QAItemRow.id).where(QAItemRow.status == "draft").order_by(QAItemRow.id))
                  if i not in flagged]
    accepted = accept_by_script(ws, drafts, prefix="demo")
    steps.add("review", f"{len(accepted)} QA items rated Valid by two scripted experts (the real review "
              "workflow; no one can log in as them)", f"zuhyo serve {ws_dir}", t, accepted=len(accepted))


def _export(ws: Any, steps: _Steps, out: Path) -> Path:
    import time

    from zuhyo.construct.publish.export import DryRunExportError, ExportOptions, export_workspace

    t = time.monotonic()
    options = ExportOptions(out=out, license="cc-by-4.0", language=("en", "ja"))
    try:
        export_workspace(ws, options)
    except DryRunExportError as e:
        steps.add("export (refused)", f"without --allow-dry-run: {e.count} dry-run items refused, as they "
                  "must be", "", t, refused=e.count)
    else:
        raise DataError("the export took dry-run items without --allow-dry-run")
    t = time.monotonic()
    options.allow_dry_run = True
    rep = export_workspace(ws, options)
    steps.add("export", f"{rep.items} QA items, {rep.images} images, {len(rep.shards)} shard(s), marked dry-run",
              str(out / "README.md"), t, items=rep.items, images=rep.images)
    return out


def _evaluate(export_dir: Path, out: Path, steps: _Steps, report: bool) -> str | None:
    import time

    from zuhyo.benchmarks.base import BenchmarkSource
    from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
    from zuhyo.evaluate.session import run_eval

    t = time.monotonic()
    run_dir = out / "run"
    config = EvalConfig(benchmarks=(BenchmarkSpec("local", BenchmarkSource(path=export_dir)),), models=(DRY_RUN,),
                        out=run_dir, prompts=("direct",), runs=1, concurrency=8, judge="auto")
    summary = run_eval(config)
    inf = summary["inference"]
    steps.add("eval --bench local", f"{inf.get('ok', 0)} answers, {inf.get('errors', 0)} errors (placeholder "
              "answers: the scores mean nothing)", f"{run_dir}/summary.json", t, ok=inf.get("ok", 0))
    if not report:
        return None
    from zuhyo.report.build import ReportOptions, build_report

    t = time.monotonic()
    report_dir = out / "report"
    build_report([run_dir], report_dir, ReportOptions(min_category_items=1))
    steps.add("report", "tables and plots of the evaluation", str(report_dir / "index.html"), t)
    return str(report_dir / "index.html")
