"""A labelling stage over the workspace's figures: one model answer per figure, validated, or people's labels.

``zuhyo classify`` (image type) and ``zuhyo complexity`` (CCV) are two :class:`LabelTask` s run by
:func:`run_labelling`: every figure whose current filter decision is not drop (a figure never filtered counts as
kept) is sent with its image (:func:`zuhyo.images.prepare.prepare_image`) and the task's prompt (a data file in
``zuhyo/prompts/construct/`` with a version). The reply must be a JSON object valid against the task's JSON schema
(sent as ``response_format`` for constrained decoding where the server supports it); an invalid reply is re-asked
with what was wrong (:func:`~zuhyo.evaluate.judges.validated_reply.ask_validated`), 3 replies in all, and a figure
with no valid reply is a per-item error, never a guessed label. HTTP 429/5xx and timeouts are retried
(:class:`zuhyo.construct.asking.RetryingBackend`). Labels are recorded with model and prompt version
(:mod:`zuhyo.construct.workspace.labels`): a re-run with the same model and prompt asks nothing again, a run with
another model keeps the earlier answers. :func:`import_labels` records people's labels from a CSV; they win over
model labels.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import select

from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.db import WorkspaceError
from zuhyo.construct.workspace.labels import record_label
from zuhyo.construct.workspace.queries import dropped_figure_ids, resolve_figure
from zuhyo.construct.workspace.records import record_error, resolve_error
from zuhyo.construct.workspace.tables import FigureLabelRow, FigureRow
from zuhyo.errors import DataError
from zuhyo.models.base import GenerationConfig, ModelBackend
from zuhyo.prompts import Prompt, load_prompt

M = TypeVar("M", bound=BaseModel)

#: Replies asked for per figure before it is an error (the first answer and two re-asks).
ATTEMPTS = 3


@dataclass(frozen=True)
class LabelTask:
    """What a labelling stage asks and how its answers are checked and stored."""

    stage: str
    """Stage name in the workspace (``image_type``, ``ccv``)."""
    prompt_name: str
    """Template under ``zuhyo/prompts/`` (``construct/image_type``); placeholders ``$caption``."""
    reply_model: type[BaseModel]
    """The reply's JSON schema (pydantic model, ``extra="forbid"``)."""
    to_value: Callable[[BaseModel], Any]
    """A validated reply → the stored label value."""
    columns: tuple[str, ...]
    """CSV columns after the figure column (``--import``)."""
    from_columns: Callable[[dict[str, str]], Any]
    """A CSV row's label columns → the stored value; ValueError with a short reason when invalid."""

    @property
    def prompt(self) -> Prompt:
        return load_prompt(self.prompt_name)

    def schema(self) -> dict[str, Any]:
        return self.reply_model.model_json_schema()


class ItemFailure(BaseModel):
    """A figure the stage could not label."""

    figure_id: int
    reason: str


class LabelReport(BaseModel):
    """What one run of a labelling stage did (counts for this run)."""

    stage: str
    model: str
    prompt_version: str
    figures: int = 0
    """Figures to label (not dropped)."""
    labelled: int = 0
    """Figures labelled by the model in this run."""
    skipped_existing: int = 0
    """Figures this model already labelled with this prompt version."""
    dropped: int = 0
    """Figures left out because their current filter decision is drop."""
    errors: int = 0
    reasked: int = 0
    """Figures that needed more than one reply to get a valid one."""
    retries: int = 0
    """Requests retried after 429/5xx/timeouts."""
    error_items: list[ItemFailure] = Field(default_factory=list)


class ImportReport(BaseModel):
    """What an ``--import CSV`` did."""

    file: str
    rows: int = 0
    imported: int = 0
    """Labels added."""
    unchanged: int = 0
    """Rows this very file (same content) already imported."""
    errors: list[str] = Field(default_factory=list)
    """Bad rows, each ``line N: reason``."""
    unknown: list[str] = Field(default_factory=list)
    """Rows naming no figure of the workspace, each ``line N: <ref>``."""


def json_object_reply(text: str, *, lenient: bool = False) -> tuple[dict[str, Any] | None, str]:
    """(the object, "") for a reply that is one JSON object and nothing else (blanks, or one ```json fence around
    it, allowed), else (None, problem). Prose around an object is a problem: the prompts ask for the object alone,
    and "It is NOT {"image_type": "Pie"}; it is a Bar" is no Pie. ``lenient`` takes the first object in the text
    (``--lenient-json``)."""
    from zuhyo.evaluate.judges.llm import first_json_object

    body = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.S | re.I)
    if fence is not None:
        body = fence.group(1)
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        return obj, ""
    found = first_json_object(text)
    if found is None:
        return None, "no JSON object in the reply"
    if lenient:
        return found, ""
    return None, ("the reply has text around its JSON object; reply with the JSON object alone, nothing before or "
                  "after it")


def parse_json_reply(reply_model: type[M], text: str, *, lenient: bool = False) -> tuple[M | None, str]:
    """(reply, "") for a reply that is one JSON object valid against ``reply_model`` and nothing else
    (:func:`json_object_reply`), else (None, problem)."""
    obj, problem = json_object_reply(text, lenient=lenient)
    if obj is None:
        return None, problem
    try:
        return reply_model.model_validate(obj), ""
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
                             for err in e.errors()[:5])
        return None, f"the JSON does not match the schema ({problems})"


def parse_reply(task: LabelTask, text: str, *, lenient: bool = False) -> tuple[Any, str]:
    """(value, "") for a reply that is one JSON object valid against the task's schema, else (None, problem)."""
    reply, problem = parse_json_reply(task.reply_model, text, lenient=lenient)
    return (None, problem) if reply is None else (task.to_value(reply), "")


def schema_instruction(schema: dict[str, Any]) -> str:
    """What a re-ask tells the model about the expected form: the reply's JSON schema."""
    return ("Reply with only one JSON object valid against this JSON schema, nothing else: "
            + json.dumps(schema, ensure_ascii=False))


def figures_to_label(ws: Workspace) -> tuple[list[FigureRow], int]:
    """The figures whose current filter decision is not drop (id order), and how many are dropped."""
    with ws.db.read() as s:
        dropped = dropped_figure_ids(s)
        rows = [r for r in s.scalars(select(FigureRow).order_by(FigureRow.id)) if r.id not in dropped]
    return rows, len(dropped)


def run_labelling(ws: Workspace, task: LabelTask, backend: ModelBackend, *, concurrency: int = 8,
                  constrained: bool = True, max_tokens: int = 1024, close: bool = True, lenient_json: bool = False,
                  on_start: Callable[[int], None] | None = None,
                  on_item: Callable[[int, str], None] | None = None) -> LabelReport:
    """Label every kept figure not yet labelled by this model and prompt version; ``on_item(figure id, outcome)``
    with outcome ``labelled``, ``existing`` or ``error``. The backend is closed at the end unless ``close`` is
    False (it lives in this call's event loop). A reply with text around its JSON object is re-asked and, if
    it stays so, the figure's error; ``lenient_json`` takes the first object instead (recorded in the run)."""
    prompt = task.prompt
    report = LabelReport(stage=task.stage, model=backend.spec, prompt_version=prompt.version)
    rows, report.dropped = figures_to_label(ws)
    report.figures = len(rows)
    with ws.db.read() as s:
        done = set(s.scalars(select(FigureLabelRow.figure_id).where(
            FigureLabelRow.stage == task.stage, FigureLabelRow.source == "model",
            FigureLabelRow.model == backend.spec, FigureLabelRow.prompt_version == prompt.version)))
    pending = [r for r in rows if r.id not in done]
    report.skipped_existing = len(rows) - len(pending)
    if on_start is not None:
        on_start(len(rows))
    if on_item is not None:
        for r in rows:
            if r.id in done:
                on_item(r.id, "existing")
    extra = {"response_format": {"type": "json_schema", "json_schema": {
        "name": task.stage, "strict": True, "schema": task.schema()}}} if constrained else {}
    config = GenerationConfig(temperature=0.0, max_tokens=max_tokens, extra_body=extra)
    params = {"model": backend.spec, "prompt": task.prompt_name, "prompt_version": prompt.version,
              "constrained": constrained, "lenient_json": lenient_json}
    with ws.run(task.stage, params, lock=True) as run:
        asyncio.run(_label_all(ws, task, backend, prompt, config, pending, run.id, report, concurrency, on_item,
                               close, lenient_json))
        run.counts = report.model_dump(include={"figures", "labelled", "skipped_existing", "dropped", "errors",
                                                "reasked", "retries"})
    return report


async def _label_all(ws: Workspace, task: LabelTask, backend: ModelBackend, prompt: Prompt,
                     config: GenerationConfig, rows: list[FigureRow], run_id: int, report: LabelReport,
                     concurrency: int, on_item: Callable[[int, str], None] | None, close: bool,
                     lenient_json: bool = False) -> None:
    from zuhyo.evaluate.judges.validated_reply import ask_validated
    from zuhyo.images.prepare import prepare_image
    from zuhyo.models.base import ModelError

    gate = asyncio.Semaphore(concurrency)
    instruction = schema_instruction(task.schema())

    def fail(row: FigureRow, reason: str) -> str:
        ws.db.write_retrying(lambda s: record_error(s, task.stage, f"figure/{row.id}", row.locator, reason,
                                                    figure_id=row.id, run_id=run_id))
        report.errors += 1
        report.error_items.append(ItemFailure(figure_id=row.id, reason=reason))
        return "error"

    async def one(row: FigureRow) -> None:
        async with gate:
            outcome = await label_one(row)
        if on_item is not None:
            on_item(row.id, outcome)

    async def label_one(row: FigureRow) -> str:
        path = ws.images.path_for(row.sha256)
        if path is None:
            return fail(row, f"image {row.sha256[:12]} is missing from the image store")
        try:
            data = await asyncio.to_thread(path.read_bytes)
            image = await asyncio.to_thread(prepare_image, data, max_pixels=backend.max_image_pixels,
                                            label=f"figure {row.id}")
        except Exception as e:  # noqa: BLE001 - ImageError, OSError: the figure's error, the stage goes on
            return fail(row, f"image: {e}")
        text = prompt.render(caption=(row.caption or "(no caption)").strip())
        try:
            result = await ask_validated(backend, text, lambda reply: parse_reply(task, reply, lenient=lenient_json),
                                         instruction=instruction, attempts=ATTEMPTS, image=image, config=config)
        except ModelError as e:
            return fail(row, f"model call failed: {e}")
        if result.value is None:
            return fail(row, f"no valid reply {result.failure(ATTEMPTS)}")
        report.reasked += bool(result.problems)
        value = result.value

        def write(s: Any) -> None:
            record_label(s, row.id, task.stage, value, source="model", model=backend.spec,
                         prompt_version=prompt.version, raw=result.text, run_id=run_id)
            resolve_error(s, task.stage, f"figure/{row.id}")

        ws.db.write_retrying(write)
        report.labelled += 1
        return "labelled"

    try:
        await asyncio.gather(*(one(r) for r in rows))
    finally:
        if close:
            await backend.aclose()
    report.retries = getattr(backend, "retries", 0)
    report.error_items.sort(key=lambda item: item.figure_id)


def import_labels(ws: Workspace, task: LabelTask, csv_path: Path | str, *, by: str = "import") -> ImportReport:
    """Record the labels of a CSV (first column: figure id or sha256; then ``task.columns``) as ``import`` labels.

    The labels of one file are recorded under ``import:<first 16 hex digits of its SHA-256>``, so importing the
    same file again adds nothing and a corrected file's labels supersede the earlier ones. Bad rows and rows
    naming no figure are reported with their line numbers; the good rows are imported. A file without the needed
    columns raises :class:`DataError` (nothing recorded).
    """
    path = Path(csv_path)
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read labels CSV {path}: {e}") from None
    reader = csv.reader(text.splitlines())
    header = [h.strip() for h in next(reader, [])]
    missing = [c for c in task.columns if c not in header[1:]]
    if not header or missing:
        raise DataError(f"labels CSV {path}: the first column must be the figure id or sha256, followed by "
                        f"columns {', '.join(task.columns)}" + (f" (missing: {', '.join(missing)})" if missing else ""))
    report = ImportReport(file=str(path))
    source_model = f"{by}:{hashlib.sha256(raw).hexdigest()[:16]}"
    with ws.run(task.stage, {"import": str(path), "model": source_model}, lock=True) as run:
        for line, cells in enumerate(reader, start=2):
            if not any(c.strip() for c in cells):
                continue
            report.rows += 1
            row = dict(zip(header, (c.strip() for c in cells), strict=False))
            ref = cells[0].strip() if cells else ""
            try:
                value = task.from_columns(row)
            except ValueError as e:
                report.errors.append(f"line {line}: {e}")
                continue
            try:
                added = _import_row(ws, task, ref, value, source_model, json.dumps(row, ensure_ascii=False), run.id)
            except WorkspaceError as e:
                report.unknown.append(f"line {line}: {e}")
                continue
            if added:
                report.imported += 1
            else:
                report.unchanged += 1
        run.counts = {"rows": report.rows, "imported": report.imported, "unchanged": report.unchanged,
                      "errors": len(report.errors), "unknown": len(report.unknown)}
    return report


def _import_row(ws: Workspace, task: LabelTask, ref: str, value: Any, model: str, raw: str, run_id: int) -> bool:
    """True when recorded, False when already there; WorkspaceError when ``ref`` names no figure."""
    if not ref:
        raise WorkspaceError("no figure id or sha256 in the first column")

    def write(s: Any) -> bool:
        fig = resolve_figure(s, ref)
        return record_label(s, fig.id, task.stage, value, source="import", model=model, raw=raw,
                            run_id=run_id) is not None

    return ws.db.write_retrying(write)


def model_labels(ws: Workspace, stage: str, model: str, prompt_version: str) -> dict[int, Any]:
    """``{figure id: value}`` of one model's labels in ``stage`` with one prompt version."""
    with ws.db.read() as s:
        return dict(s.execute(select(FigureLabelRow.figure_id, FigureLabelRow.value).where(
            FigureLabelRow.stage == stage, FigureLabelRow.source == "model", FigureLabelRow.model == model,
            FigureLabelRow.prompt_version == prompt_version)).all())
