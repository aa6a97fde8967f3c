"""Error analysis (HakushoBench §6.3: "we manually analyze 50 randomly sampled questions incorrectly answered by"
the best model): load one model's wrong answers from a run set written by ``zuhyo eval``, draw N at random,
let people tag each with an error type (perception, knowledge, counting, ... — configurable) and a note, and
break the tags down (``zuhyo report`` shows it when a workspace is given)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from zuhyo.annotate.assign_base import (
    acknowledge,
    aware,
    claim,
    current_open,
    expire_stale,
    new_assignment,
    set_assignment,
    transact,
)
from zuhyo.annotate.users import require
from zuhyo.annotate.workflow import (
    DEFAULT_ERROR_TYPES,
    ErrorTask,
    NotFound,
    SubmitResult,
    WorkflowConfig,
    WorkflowError,
)
from zuhyo.construct.qa.items import log_action
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import utcnow
from zuhyo.construct.workspace.qa_tables import AssignmentRow, ErrorSampleRow, ErrorTagRow

if TYPE_CHECKING:
    from zuhyo.images.store import ImageStore
    from zuhyo.report.runsets import RunSet

DEFAULT_CONFIG = WorkflowConfig()


def _model_of(records: set[str], wanted: str) -> str:
    """The run set's model spec for ``wanted``: the spec itself, or a unique spec whose name (between ``:`` and
    ``@``) is ``wanted``."""
    if wanted in records:
        return wanted
    named = sorted(m for m in records if m.partition(":")[2].partition("@")[0] == wanted)
    if len(named) == 1:
        return named[0]
    listed = ", ".join(sorted(records)) or "none"
    raise WorkflowError(f"model {wanted!r} is {'ambiguous' if named else 'not'} in the run set (models: {listed})")


def wrong_answers(run_dir: Path, model: str, judge: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """(model spec, payloads) of every prediction of ``model`` that its judge marked incorrect, by key."""
    from zuhyo.report.runsets import load_runset

    return _wrong_answers(load_runset(run_dir), run_dir, model, judge)


def _wrong_answers(runset: RunSet, run_dir: Path, model: str, judge: str | None) -> tuple[str, list[dict[str, Any]]]:
    spec = _model_of({k[2] for k in runset.predictions}, model)
    judges = sorted({k[5] for k in runset.judgments if k[2] == spec})
    if judge is None:
        if len(judges) > 1:
            raise WorkflowError(f"{run_dir}: {spec} was judged by several judges ({', '.join(judges)}); "
                                "choose one with --judge")
        judge = judges[0] if judges else None
    elif judge not in judges:
        raise WorkflowError(f"{run_dir}: no judgments of {spec} by {judge!r} (judges: {', '.join(judges) or 'none'})")
    out: list[dict[str, Any]] = []
    for key, verdict in sorted(runset.judgments.items()):
        bench, sample_id, rec_model, prompt, run_index, rec_judge = key
        if rec_model != spec or rec_judge != judge or verdict.verdict != "incorrect":
            continue
        pred = runset.predictions.get((bench, sample_id, rec_model, prompt, run_index))
        sample = runset.samples.get((bench, sample_id))
        out.append({
            "key": f"{bench}/{sample_id}/{prompt}/{run_index}", "benchmark": bench, "sample_id": sample_id,
            "prompt": prompt, "run_index": run_index, "judge": rec_judge, "verdict": verdict.verdict,
            "reason": verdict.reason,
            "question": sample.question if sample else None,
            "references": list(sample.answers) if sample else [],
            "image": sample.image.model_dump(mode="json") if sample and sample.image else None,
            "prediction": pred.answer if pred else None, "response": pred.response if pred else None,
        })
    return spec, out


#: The largest image file an error sample may bring into the workspace store.
MAX_ERROR_IMAGE_BYTES = 64 * 1024 * 1024


def _store_image(payload: dict[str, Any], images: ImageStore, base_dirs: dict[str, Path | None]) -> str | None:
    """Copy the sample's image into the workspace store and point ``payload["image"]`` at it by hash (the app
    serves error-sample images only from the store, never from a path recorded in a run set); the reason when
    it cannot be copied (the sample is still imported, and the page says the image is missing)."""
    from zuhyo.images.store import sniff_image_type
    from zuhyo.schema import ImageRef

    raw = payload.get("image")
    if not raw:
        return "the sample has no image"
    ref = ImageRef.model_validate(raw)
    if ref.sha256 and len(ref.sha256) == 64 and images.has(ref.sha256):
        data = None
    elif ref.data is not None:
        data = ref.data
    else:
        path = ref.resolve_path(base_dirs.get(str(payload.get("benchmark", ""))))
        if path is None:
            return "the image is known only by URL (fetch it with `zuhyo images fetch` before the run)"
        try:
            if path.stat().st_size > MAX_ERROR_IMAGE_BYTES:
                return f"the image file is over {MAX_ERROR_IMAGE_BYTES // 2**20} MiB"
            data = path.read_bytes()
        except OSError as e:
            return f"the image file cannot be read ({e.strerror or type(e).__name__})"
    if data is not None:
        if sniff_image_type(data) is None:
            return "the image file is not a PNG, JPEG, GIF, WebP, BMP or TIFF image"
        sha, _ = images.put(data)
        ref = ref.model_copy(update={"sha256": sha, "data": None})
    payload["image"] = ref.model_dump(mode="json", exclude={"data"})
    return None


def import_error_samples(db: Database, run_dir: Path, model: str, n: int, seed: int,
                         error_types: tuple[str, ...] = DEFAULT_ERROR_TYPES, *, images: ImageStore,
                         judge: str | None = None, actor: str = "zuhyo errors") -> dict[str, Any]:
    """Add ``n`` of the model's wrong answers, drawn at random with ``seed`` (sorted by key first, so the draw
    is reproducible), to ``error_samples``, their images copied into the workspace store ``images``; re-running
    adds nothing twice. The error types are kept with each sample. Returns ``{"run_set", "model", "wrong",
    "sampled", "imported", "existing", "image_errors"}`` (``image_errors``: sample key → why its image could
    not be copied)."""
    from zuhyo.report.runsets import load_runset

    if n < 1:
        raise WorkflowError(f"--n must be at least 1 (got {n})")
    types = tuple(dict.fromkeys(t.strip() for t in error_types if t.strip()))
    if not types:
        raise WorkflowError("at least one error type is needed")
    run_set = str(run_dir.resolve())
    runset = load_runset(run_dir)
    spec, wrong = _wrong_answers(runset, run_dir, model, judge)
    drawn = random.Random(seed).sample(wrong, min(n, len(wrong)))
    base_dirs = runset.base_dirs
    image_errors: dict[str, str] = {}
    for payload in drawn:
        if (why := _store_image(payload, images, base_dirs)) is not None:
            payload["image_error"] = why
            image_errors[payload["key"]] = why

    def work(s: Session) -> tuple[int, int]:
        added = existing = 0
        for payload in drawn:
            found = s.scalars(select(ErrorSampleRow.id).where(
                ErrorSampleRow.run_set == run_set, ErrorSampleRow.model == spec,
                ErrorSampleRow.sample_key == payload["key"])).one_or_none()
            if found is not None:
                existing += 1
                continue
            row = ErrorSampleRow(run_set=run_set, model=spec, sample_key=payload["key"], payload=payload,
                                 meta={"seed": seed, "n": n, "error_types": list(types)}, created_at=utcnow())
            s.add(row)
            s.flush()
            log_action(s, actor=actor, action="error_import", target_type="error_sample", target_id=row.id,
                       after={"run_set": run_set, "model": spec, "sample_key": payload["key"]})
            added += 1
        return added, existing

    added, existing = transact(db, work)
    return {"run_set": run_set, "model": spec, "wrong": len(wrong), "sampled": len(drawn), "imported": added,
            "existing": existing, "image_errors": image_errors}


def _types(row: ErrorSampleRow, config: WorkflowConfig) -> tuple[str, ...]:
    kept = (row.meta or {}).get("error_types")
    return tuple(kept) if kept else config.error_types


def _error_task(s: Session, row: AssignmentRow, config: WorkflowConfig) -> ErrorTask:
    sample = s.get(ErrorSampleRow, int(row.target_key.partition("/")[2]))
    assert sample is not None
    return ErrorTask(assignment_id=row.id, error_sample_id=sample.id, run_set=sample.run_set, model=sample.model,
                     payload=dict(sample.payload or {}), error_types=_types(sample, config),
                     expires_at=aware(row.expires_at))


def next_error_task(db: Database, user_id: int, config: WorkflowConfig = DEFAULT_CONFIG, *,
                    hand_out: bool = True) -> ErrorTask | None:
    """The user's open error-tagging assignment, else (when ``hand_out``) one on the oldest sample that has fewer than
    ``config.taggers_per_error`` taggers and that this user has not tagged or skipped, else None."""

    def work(s: Session) -> ErrorTask | None:
        user = require(s, user_id)
        if not {"annotator", "expert", "admin"} & set(user.roles or []):
            raise WorkflowError(f"user {user.name!r} has no role that tags errors")
        now = utcnow()
        expire_stale(s, now)
        held = current_open(s, user.id, "error")
        if held is not None or not hand_out:
            return _error_task(s, held, config) if held is not None else None
        live = Counter(t for t, in s.execute(select(AssignmentRow.target_key).where(
            AssignmentRow.step == "error", AssignmentRow.status.in_(("open", "submitted")))))
        mine = {t for t, in s.execute(select(AssignmentRow.target_key).where(
            AssignmentRow.step == "error", AssignmentRow.user_id == user.id,
            AssignmentRow.status.in_(("open", "submitted", "skipped"))))}
        for sid, in s.execute(select(ErrorSampleRow.id).order_by(ErrorSampleRow.id)):
            target = f"error/{sid}"
            if target in mine or live[target] >= config.taggers_per_error:
                continue
            taken = set(s.scalars(select(AssignmentRow.slot).where(
                AssignmentRow.step == "error", AssignmentRow.target_key == target,
                AssignmentRow.status.in_(("open", "submitted")))))
            slot = min(set(range(config.taggers_per_error)) - taken)
            row = new_assignment(s, step="error", target_key=target, user=user, now=now,
                                 ttl_s=config.assignment_ttl.total_seconds(), slot=slot)
            return _error_task(s, row, config)
        return None

    return transact(db, work)


def submit_error_tag(db: Database, user_id: int, assignment_id: int, error_type: str, note: str | None,
                     submit_key: str, config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Tag the sample with one of its error types (as imported; else ``config.error_types``) and a note."""

    def work(s: Session) -> SubmitResult:
        claimed = claim(s, user_id, submit_key, assignment_id, "error")
        if isinstance(claimed, SubmitResult):
            return claimed
        user, row = claimed
        sample = s.get(ErrorSampleRow, int(row.target_key.partition("/")[2]))
        if sample is None:
            raise NotFound(f"error sample for assignment {assignment_id}: no such sample")
        types = _types(sample, config)
        if error_type not in types:
            raise WorkflowError(f"error sample {sample.id}: unknown error type {error_type!r} "
                                f"(one of {', '.join(types)})")
        tag = ErrorTagRow(error_sample_id=sample.id, user_id=user.id, error_type=error_type,
                          note=(note or "").strip() or None, created_at=utcnow())
        s.add(tag)
        s.flush()
        set_assignment(s, row, "submitted", actor=user.name, user_id=user.id)
        log_action(s, actor=user.name, user_id=user.id, action="error_tag", target_type="error_sample",
                   target_id=sample.id, after={"error_type": error_type, "note": tag.note})
        return acknowledge(s, user, SubmitResult(key=submit_key, step="error", outcome="tagged",
                                                 assignment_id=row.id, verdict=error_type))

    return transact(db, work)


def error_breakdown(db: Database) -> dict[str, Any] | None:
    """Tags per (run set, model): ``{"groups": [{"run_set", "model", "samples", "tagged", "tags",
    "types": {type: n}, "shares": {type: fraction of tags}}]}``, or None when no error sample was imported.
    A sample tagged by several people counts once per tag."""
    with db.read() as s:
        if not s.scalar(select(func.count(ErrorSampleRow.id))):
            return None
        groups: list[dict[str, Any]] = []
        for run_set, model, count in s.execute(
                select(ErrorSampleRow.run_set, ErrorSampleRow.model, func.count(ErrorSampleRow.id))
                .group_by(ErrorSampleRow.run_set, ErrorSampleRow.model)
                .order_by(ErrorSampleRow.run_set, ErrorSampleRow.model)):
            tags = list(s.execute(select(ErrorTagRow.error_sample_id, ErrorTagRow.error_type)
                                  .join(ErrorSampleRow, ErrorSampleRow.id == ErrorTagRow.error_sample_id)
                                  .where(ErrorSampleRow.run_set == run_set, ErrorSampleRow.model == model)))
            types = Counter(t for _, t in tags)
            groups.append({"run_set": run_set, "model": model, "samples": int(count),
                           "tagged": len({sid for sid, _ in tags}), "tags": len(tags),
                           "types": dict(types.most_common()),
                           "shares": {t: n / len(tags) for t, n in types.most_common()}})
    return {"groups": groups}
