"""``zuhyo export``: a workspace's QA items as a Hugging Face dataset in zuhyo's Sample schema, with a card.

What goes in: the QA items whose status is ``accepted`` (through the annotation workflow: HakushoBench §3.3 blind
verification, DomainCQA §3.3 expert review), and drafts (status ``draft``) only when asked; never rejected or
discarded items. Each item becomes a :class:`~zuhyo.schema.Sample` through
:func:`zuhyo.construct.qa.items.qa_item_to_sample`, with the figure's current image type and CCV and its source's
title and licence added, so ``zuhyo analyze stats`` and the astrochart judges see what the workspace knows.

Layout of ``OUT/``::

    README.md                       the dataset card (YAML header: licence, task categories, configs)
    <split>-00000-of-0000N.parquet  Parquet shards, flat columns (zuhyo.schema.FLAT_COLUMNS)
    disk/                           the same rows by ``datasets.Dataset.save_to_disk``
    statistics/                     the ``zuhyo analyze stats`` tables (Markdown, CSV, JSON)
    plots/                          bar charts of those tables (PNG, SVG), shown in the card
    zuhyo_export.json               what was exported (the report), which also marks the folder as an export

``zuhyo eval --bench local --path OUT`` loads the shards (``--path OUT/disk``: the save_to_disk copy);
``datasets.load_dataset("parquet", data_files="OUT/*.parquet")``, ``datasets.load_dataset("OUT")`` (the card's
configs) and ``datasets.load_from_disk("OUT/disk")`` load it too. (The shards sit at the top, not in ``data/``,
because the ``local`` adapter reads a folder's own ``*.parquet``; and ``save_to_disk`` gets its own folder
because ``datasets.load_dataset`` refuses a folder that holds one.)
The folder is written beside ``OUT`` first and swapped in at the end: a failed export leaves no half dataset.

Images: ``embed`` puts each image file's bytes (from the workspace's content-addressed store, checked against
its SHA-256) in the rows; ``url`` keeps the image's original URL (HTML collectors record it) and its SHA-256, so
``zuhyo images fetch`` can materialise and verify it. An item whose image is missing or corrupt in the store, or
has no URL in ``url`` mode, is an error naming the item; the export fails unless ``skip_missing`` leaves them out
(counted in the report).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select

from zuhyo.construct.publish.folder_swap import partial_folder, recover_output, swap_in
from zuhyo.construct.publish.report import ExportFailure, ExportReport
from zuhyo.construct.qa.items import qa_item_to_sample
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.labels import CCV_STAGE, IMAGE_TYPE_STAGE, ccv_tuple, current_label_rows
from zuhyo.construct.workspace.qa_tables import QAItemRow
from zuhyo.construct.workspace.records import source_title, source_url
from zuhyo.construct.workspace.tables import Document, FigureRow, Source
from zuhyo.errors import DataError
from zuhyo.images.store import sha256_hex
from zuhyo.schema import HakushoMeta, ImageRef, ImageType, Sample, SourceInfo, TopicGroup

IMAGE_MODES = ("embed", "url")
EXPORT_STAGE = "export"
MARKER = "zuhyo_export.json"
DISK_DIR = "disk"
#: Statuses exported: accepted always, drafts only with ``include_drafts``; rejected/discarded never.
ACCEPTED, DRAFT = "accepted", "draft"


class ExportItemsError(DataError):
    """Items that cannot be exported (without ``skip_missing``); the message names the first, ``failures`` all."""

    def __init__(self, failures: list[ExportFailure]) -> None:
        self.failures = failures
        f = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        super().__init__(f"{len(failures)} items cannot be exported, e.g. {f.item} (figure {f.figure_id}): "
                         f"{f.reason}{more}; fix them or pass --skip-missing")


@dataclass
class ExportOptions:
    out: Path
    images: str = "embed"
    include_drafts: bool = False
    skip_missing: bool = False
    name: str | None = None
    """Benchmark name written in every row (default: the out folder's name)."""
    split: str = "test"
    license: str = "other"
    """The dataset's licence for the card (SPDX-like id as the Hub uses: cc-by-4.0, mit, other ...)."""
    source_licenses: dict[str, str] | None = None
    """Licence per source id (as a string), overriding what the sources' metadata says."""
    language: tuple[str, ...] = ()
    max_shard_mb: float = 256.0
    plots: bool = True
    allow_dry_run: bool = False
    """Export items holding dry-run placeholders (a rehearsal: ``zuhyo demo build``); the card says so."""


def image_url(fig: FigureRow) -> str | None:
    """The figure's original image URL (as published, before redirects), when it was collected from the web."""
    prov = fig.provenance or {}
    for key in ("image_url", "url", "final_url"):
        value = prov.get(key)
        if isinstance(value, str) and value.startswith(("http://", "https://")):
            return value
    return fig.locator if fig.locator.startswith(("http://", "https://")) else None


def source_license(src: Source, doc: Document, overrides: dict[str, str] | None) -> str | None:
    """A source's licence: ``overrides[str(source id)]``, else ``license`` in the document's or source's meta."""
    if overrides and str(src.id) in overrides:
        return overrides[str(src.id)]
    for meta in (doc.meta or {}, src.meta or {}):
        for key in ("license", "licence"):
            if isinstance(meta.get(key), str) and meta[key].strip():
                return str(meta[key]).strip()
    return None


def hakusho_meta(sample: Sample, src: Source, fig: FigureRow) -> HakushoMeta | None:
    """The white paper and topic group of a figure collected from a listed series (``collect html --series``:
    the source's meta, else the figure's provenance), merged into the sample's own; None when neither knows."""
    known: dict[str, Any] = {}
    for meta in (fig.provenance or {}, src.meta or {}):
        for key in ("white_paper", "topic"):
            if isinstance(meta.get(key), str) and meta[key]:
                known[key] = meta[key]
    topic = known.get("topic")
    if topic not in {t.value for t in TopicGroup} and "white_paper" not in known:
        return sample.hakusho
    base = sample.hakusho or HakushoMeta()
    return base.model_copy(update={
        "white_paper": base.white_paper or known.get("white_paper"),
        "topic_group": base.topic_group or (TopicGroup(topic) if topic in {t.value for t in TopicGroup} else None)})


def _image(ws: Workspace, fig: FigureRow, mode: str) -> ImageRef | str:
    """The figure's image reference for ``mode``, or the reason it has none."""
    common: dict[str, Any] = {"sha256": fig.sha256, "width": fig.width, "height": fig.height, "mime": fig.mime}
    if mode == "url":
        url = image_url(fig)
        if url is None:
            return ("no image URL (collected from a file, not the web); export it with --images embed, or leave "
                    "it out with --skip-missing")
        return ImageRef(url=url, **common)
    path = ws.images.path_for(fig.sha256)
    if path is None:
        return f"image {fig.sha256[:12]} is missing from the workspace's image store ({ws.images.root})"
    try:
        data = path.read_bytes()
    except OSError as e:
        return f"image {fig.sha256[:12]} cannot be read from the store: {e.strerror or e}"
    if sha256_hex(data) != fig.sha256:
        return f"image {fig.sha256[:12]} in the store is corrupt (its bytes no longer hash to its SHA-256)"
    return ImageRef(data=data, **common)


class ExportGateError(DataError):
    """Accepted items that did not pass their protocol's human checks (:mod:`zuhyo.construct.qa.gates`): the
    export refuses them whatever the options, naming how many and the first ones."""

    def __init__(self, failures: list[ExportFailure]) -> None:
        self.failures = failures
        first = "; ".join(f"{f.item}: {f.reason}" for f in failures[:3])
        more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
        super().__init__(f"{len(failures)} accepted item(s) did not pass their protocol's quality gates: "
                         f"{first}{more}. Send them through verification or review in `zuhyo serve`, or discard "
                         "them")


class DryRunExportError(DataError):
    """Items made by the ``dry-run`` backend (placeholders of a rehearsal, :mod:`zuhyo.models.dry_run`): drafted
    by it, or on a figure whose image type or CCV it gave. The export refuses them unless ``allow_dry_run``."""

    def __init__(self, failures: list[ExportFailure]) -> None:
        self.failures = failures
        self.count = len(failures)
        first = "; ".join(f"{f.item}: {f.reason}" for f in failures[:2])
        more = f" (and {len(failures) - 2} more)" if len(failures) > 2 else ""
        super().__init__(f"{len(failures)} item(s) hold dry-run placeholders, not data: {first}{more}. Re-run the "
                         "stages with a real model, or pass --allow-dry-run to export a rehearsal")


def dry_run_reason(item: QAItemRow, labels: dict[str, str | None]) -> str | None:
    """Why ``item`` holds dry-run placeholders (``labels``: the model of its figure's current label per stage)."""
    from zuhyo.models.dry_run import is_dry_run

    if is_dry_run(item.model):
        return "drafted by the dry-run backend"
    stages = [stage for stage, model in labels.items() if is_dry_run(model)]
    return f"its figure's {' and '.join(stages)} came from the dry-run backend" if stages else None


@dataclass
class Collected:
    """What :func:`collect_samples` found: the samples in item id order with each one's provenance."""

    samples: list[Sample]
    provenance: list[dict[str, Any]]
    by_status: Counter[str]
    failures: list[ExportFailure]
    gate_failures: list[ExportFailure]
    funnel: dict[str, dict[str, int]]
    dry_run: list[ExportFailure]
    """Items holding dry-run placeholders (:func:`dry_run_reason`); exported only with ``allow_dry_run``."""


def collect_samples(ws: Workspace, opts: ExportOptions, name: str) -> Collected:
    """The exported items as samples (in item id order) with their provenance, their statuses, the items that
    failed (missing images, invalid samples) and the accepted items that did not pass their gates."""
    from zuhyo.construct.qa.gates import GateConfig, funnel, gate_failure, gather_evidence, provenance
    from zuhyo.construct.workspace.qa_tables import UserRow

    gates = GateConfig.from_workspace(ws.config)
    statuses = [ACCEPTED] + ([DRAFT] if opts.include_drafts else [])
    with ws.db.read() as s:
        all_items = list(s.scalars(select(QAItemRow)))
        evidence = gather_evidence(s, [i.id for i in all_items])  # the funnel counts items still in flight too
        users = {u.id: u for u in s.scalars(select(UserRow))}
        rows = list(s.execute(
            select(QAItemRow, FigureRow, Document, Source)
            .join(FigureRow, FigureRow.id == QAItemRow.figure_id)
            .join(Document, Document.id == FigureRow.document_id)
            .join(Source, Source.id == Document.source_id)
            .where(QAItemRow.status.in_(statuses)).order_by(QAItemRow.id)))
        type_rows = current_label_rows(s, IMAGE_TYPE_STAGE, kept_only=False)
        ccv_rows = current_label_rows(s, CCV_STAGE, kept_only=False)
    types = {fid: r.value for fid, r in type_rows.items()}
    ccvs = {fid: ccv_tuple(r.value) for fid, r in ccv_rows.items()}
    dry_run: list[ExportFailure] = []
    samples: list[Sample] = []
    chains: list[dict[str, Any]] = []
    by_status: Counter[str] = Counter()
    failures: list[ExportFailure] = []
    gate_failures: list[ExportFailure] = []
    for item, fig, doc, src in rows:
        if item.status == ACCEPTED:
            why = gate_failure(item, evidence[item.id], gates)
            if why is not None:
                gate_failures.append(ExportFailure(item=f"qa-{item.id}", figure_id=fig.id, reason=why))
                continue
        image = _image(ws, fig, opts.images)
        if isinstance(image, str):
            failures.append(ExportFailure(item=f"qa-{item.id}", figure_id=fig.id, reason=image))
            continue
        try:
            sample = qa_item_to_sample(item, fig, image, benchmark=name)
        except (ValidationError, ValueError) as e:  # an unknown flag, an astro category without its axis ...
            why = e.errors()[0]["msg"] if isinstance(e, ValidationError) else str(e)
            failures.append(ExportFailure(item=f"qa-{item.id}", figure_id=fig.id, reason=f"not a valid sample: {why}"))
            continue
        placeholder = dry_run_reason(item, {"image type": getattr(type_rows.get(fig.id), "model", None),
                                            "CCV": getattr(ccv_rows.get(fig.id), "model", None)})
        if placeholder is not None:
            dry_run.append(ExportFailure(item=f"qa-{item.id}", figure_id=fig.id, reason=placeholder))
            sample = sample.model_copy(update={"metadata": {**sample.metadata, "dry_run": True}})
        samples.append(_enrich(sample, fig, doc, src, types.get(fig.id), ccvs.get(fig.id), opts))
        chains.append(provenance(item, evidence[item.id], gates, users))
        by_status[item.status] += 1
    return Collected(samples, chains, by_status, failures, gate_failures, funnel(all_items, evidence, gates), dry_run)


def _enrich(sample: Sample, fig: FigureRow, doc: Document, src: Source, image_type: Any,
            ccv: tuple[int, ...] | None, opts: ExportOptions) -> Sample:
    base = sample.source or SourceInfo()
    publisher = (src.meta or {}).get("publisher")
    source = base.model_copy(update={"title": source_title(src, doc), "license": source_license(src, doc,
                                     opts.source_licenses), "publisher": publisher if isinstance(publisher, str)
                                     else None, "url": source_url(src, doc, base.url)})
    update: dict[str, Any] = {"source": source, "split": opts.split, "hakusho": hakusho_meta(sample, src, fig)}
    if image_type is not None and str(image_type) in {t.value for t in ImageType}:
        update["image_type"] = ImageType(str(image_type))
    if sample.astro is not None and ccv is not None:
        update["astro"] = sample.astro.model_copy(update={"ccv": list(ccv)})
    meta = dict(sample.metadata, source_id=src.id, document_id=doc.id, figure_number=fig.figure_number)
    update["metadata"] = meta
    return sample.model_copy(update=update)


def _write_shards(samples: list[Sample], chains: list[dict[str, Any]], root: Path, split: str,
                  max_shard_mb: float) -> list[str]:
    """Parquet shards of at most ``max_shard_mb`` (estimated from image bytes and metadata) each, in the form the
    Hub's viewer shows (:mod:`zuhyo.construct.publish.hub_columns`: a ``datasets.Image`` column, category, aspect,
    flags, CCV and source as columns), with a ``provenance`` column (each item's chain of checks as JSON,
    :func:`zuhyo.construct.qa.gates.provenance`)."""
    from zuhyo.construct.publish.hub_columns import write_hub_parquet
    from zuhyo.schema import sample_to_json

    limit = max(1.0, max_shard_mb) * 1024 * 1024
    groups: list[list[tuple[Sample, dict[str, Any]]]] = [[]]
    size = 0.0
    for smp, chain in zip(samples, chains, strict=True):
        est = len(smp.image.data or b"") if smp.image is not None else 0
        est += len(sample_to_json(smp.model_copy(update={"image": None})))
        if groups[-1] and size + est > limit:
            groups.append([])
            size = 0.0
        groups[-1].append((smp, chain))
        size += est
    names = []
    for i, group in enumerate(groups):
        name = f"{split}-{i:05d}-of-{len(groups):05d}.parquet"
        write_hub_parquet([smp for smp, _ in group], [c for _, c in group], root / name)
        names.append(name)
    return names


def _save_to_disk(root: Path, shards: list[str]) -> None:
    """The same rows by ``datasets.Dataset.save_to_disk`` in ``root/disk``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Dataset
    from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled

    table = pa.concat_tables([pq.read_table(root / s, memory_map=True) for s in shards])
    was_on = is_progress_bar_enabled()
    disable_progress_bar()  # its bar would mix with zuhyo's own lines on stderr
    try:
        Dataset(table).save_to_disk(str(root / DISK_DIR))
    finally:
        if was_on:
            enable_progress_bar()


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise DataError(f"--out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise DataError(f"--out {out} is a folder with other files in it (not an earlier zuhyo export); choose an "
                        "empty or new folder")


def export_workspace(ws: Workspace, opts: ExportOptions,
                     on_phase: Callable[[str], None] | None = None) -> ExportReport:
    """Export the workspace's accepted (and with ``include_drafts`` draft) QA items to ``opts.out``."""
    from zuhyo.analysis.statistics import dataset_statistics, write_statistics
    from zuhyo.benchmarks.base import LoadResult
    from zuhyo.construct.publish.card import render_card
    from zuhyo.construct.workspace.stage_counts import stage_counts

    if opts.images not in IMAGE_MODES:
        raise DataError(f"--images must be one of {', '.join(IMAGE_MODES)}, got {opts.images!r}")
    out = opts.out
    if out.exists() and not out.is_dir():
        raise DataError(f"--out {out} exists and is not a folder")
    name = opts.name or out.resolve().name
    note = on_phase or (lambda _phase: None)
    params = {"out": str(out), "images": opts.images, "include_drafts": opts.include_drafts,
              "skip_missing": opts.skip_missing, "name": name, "split": opts.split}
    _check_source_ids(ws, opts.source_licenses)
    with ws.run(EXPORT_STAGE, params, lock=True) as run:  # one export of a workspace at a time
        for repair in recover_output(out, MARKER):
            note(repair)
        _check_out(out)
        note("reading QA items")
        found = collect_samples(ws, opts, name)
        samples, by_status, failures = found.samples, found.by_status, found.failures
        run.counts = {"items": len(samples), "errors": len(failures), "gate_failures": len(found.gate_failures)}
        if found.gate_failures:
            raise ExportGateError(found.gate_failures)
        if found.dry_run and not opts.allow_dry_run:
            raise DryRunExportError(found.dry_run)
        if failures and not opts.skip_missing:
            raise ExportItemsError(failures)
        if not samples:
            raise DataError("no QA item to export: none is accepted" +
                            ("" if opts.include_drafts else " (drafts are exported only with --include-drafts)"))
        tmp = partial_folder(out)
        tmp.mkdir(parents=True)
        try:
            note("writing Parquet shards")
            shards = _write_shards(samples, found.provenance, tmp, opts.split, opts.max_shard_mb)
            note("writing save_to_disk copy")
            _save_to_disk(tmp, shards)
            note("statistics and plots")
            stats = dataset_statistics(LoadResult(name, samples, [], base_dir=tmp))
            write_statistics(stats, tmp / "statistics")
            plots = []
            if opts.plots:
                from zuhyo.construct.publish.card_plots import statistics_plots

                plots = statistics_plots(stats, tmp / "plots")
            images = len({smp.image.sha256 for smp in samples if smp.image is not None})
            report = ExportReport(items=len(samples), images=images, shards=shards, out=str(out),
                                  card=str(out / "README.md"), name=name, split=opts.split,
                                  images_mode=opts.images, by_status=dict(sorted(by_status.items())),
                                  skipped=len(failures), error_items=failures,
                                  plots=[str(p.png.relative_to(tmp)) for p in plots], funnel=found.funnel,
                                  review_alpha=_review_alpha(ws), dry_run=len(found.dry_run))
            steps = stage_counts(ws)
            card = render_card(report, stats, steps, plots=[(p.name, p.title, str(p.png.relative_to(tmp)), p.caption)
                                                            for p in plots],
                               samples=samples, license=opts.license, language=opts.language,
                               draft_mix=_draft_mix(ws))
            (tmp / "README.md").write_text(card, encoding="utf-8")
            (tmp / MARKER).write_text(json.dumps({**report.model_dump(mode="json"),
                                                  "steps": [st.to_json() for st in steps]},
                                                 ensure_ascii=False, indent=2), encoding="utf-8")
            swap_in(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        run.counts = {"items": report.items, "images": report.images, "shards": len(shards),
                      "skipped": report.skipped}
    return report


def _draft_mix(ws: Workspace) -> dict[str, Any] | None:
    """The latest finished drafting run's question mix and plan (``zuhyo draft --mix``), for the card."""
    from zuhyo.construct.workspace.tables import StageRun

    with ws.db.read() as s:
        params = s.scalar(select(StageRun.params).where(StageRun.stage == "draft", StageRun.status == "done")
                          .order_by(StageRun.id.desc()).limit(1))
    if not isinstance(params, dict):
        return None
    return {"mix": params.get("mix", "every"), "planned": params.get("planned", {})}


def _check_source_ids(ws: Workspace, overrides: dict[str, str] | None) -> None:
    """DataError naming the ``--source-license`` ids that are no source of the workspace (a typo would otherwise
    leave a source without its licence, silently)."""
    if not overrides:
        return
    with ws.db.read() as s:
        known = {str(sid): title for sid, title in s.execute(select(Source.id, Source.title))}
    unknown = [sid for sid in overrides if sid not in known]
    if unknown:
        listed = ", ".join(f"{sid} ({title or 'untitled'})" for sid, title in sorted(known.items(), key=lambda kv:
                                                                                    int(kv[0]))[:10])
        raise DataError(f"--source-license: no source with id {', '.join(unknown)} in the workspace; its sources "
                        f"are {listed or 'none'} (`zuhyo figures WS --json` shows each figure's source_id)")


def _review_alpha(ws: Workspace) -> dict[str, Any] | None:
    """Krippendorff's α (nominal, Valid/Flawed) of the experts' ratings with its bootstrap 95 % CI, for the
    card (DomainCQA §4.3 reports α for its expert review); None without two ratings of one item."""
    from zuhyo.agreement import alpha_summary
    from zuhyo.construct.qa.gates import review_matrix
    from zuhyo.construct.workspace.qa_tables import ReviewRow

    with ws.db.read() as s:
        rows = list(s.execute(select(ReviewRow.qa_item_id, ReviewRow.item_revision, ReviewRow.user_id,
                                     ReviewRow.rating, ReviewRow.meta)))
    matrix, coders, units = review_matrix(rows)
    if coders < 2 or not units:
        return None
    summary = alpha_summary(matrix, "nominal", n_boot=1000, seed=0)
    return summary if summary.get("alpha") is not None else None
