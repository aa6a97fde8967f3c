"""The run store: a directory of append-only JSONL logs.

Writes go through :class:`AppendLog`. Inside an event loop, records appended during one loop iteration are
handed to the OS together at the start of the next (group commit: one ``write`` syscall for all the requests
that finished together, instead of one each — measured at ~70 µs per record). Outside a loop every record is
flushed at once. Either way a SIGKILL loses only requests still in flight (or finished within the same loop
iteration), and ``fsync`` runs at most every ``fsync_interval_s`` and on close, so a power loss loses at most
that window. A torn final line left by a crash is cut off when the
log is reopened, before anything is appended after it.

A failed write (disk full, I/O error) is never retried and never half-kept: the log cuts the file back to its
last complete record, refuses further appends with a :class:`StoreWriteError` (``no space left on device writing
runs/x/predictions.jsonl``) and tells its owner through ``on_error``, so a run stops at once and resumes once the
cause is fixed. Reads stream the file line by line: memory does not grow with the log's size.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from zuhyo.errors import DataError, ZuhyoError
from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord

R = TypeVar("R", bound=BaseModel)

PREDICTIONS = "predictions.jsonl"
JUDGMENTS = "judgments.jsonl"
JUDGE_CACHE = "judge_cache.jsonl"
MANIFEST = "run.json"
SUMMARY = "summary.json"


class StoreWriteError(ZuhyoError):
    """Writing a run-set file failed (disk full, I/O error): the run stops; what was written stays valid."""


def write_error(exc: OSError, path: Path) -> StoreWriteError:
    """``no space left on device writing runs/x/predictions.jsonl`` (the OS's reason, lower-cased, and the file)."""
    reason = exc.strerror or str(exc)
    return StoreWriteError(f"{reason[:1].lower()}{reason[1:]} writing {path}")


def repair_torn_tail(path: Path) -> int:
    """Truncate a partial last line (no trailing newline) left by a crash; return bytes removed."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return 0
        # Walk back to the last newline.
        pos = size
        chunk = 4096
        while pos > 0:
            start = max(0, pos - chunk)
            f.seek(start)
            buf = f.read(pos - start)
            idx = buf.rfind(b"\n")
            if idx >= 0:
                cut = start + idx + 1
                f.truncate(cut)
                return size - cut
            pos = start
        f.truncate(0)
        return size


class AppendLog:
    """An append-only JSONL file with group commit and batched fsync; a write failure stops it (see module doc)."""

    def __init__(self, path: Path, fsync_interval_s: float = 1.0,
                 on_error: Callable[[StoreWriteError], None] | None = None) -> None:
        self.path = path
        self.on_error = on_error
        """Called once, with the error, when a write fails (from the event loop when the write was deferred)."""
        self.error: StoreWriteError | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.repaired_bytes = repair_torn_tail(path)
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            raise write_error(e, path) from None
        self._size = os.fstat(self._fd).st_size
        """Bytes of complete records in the file: a failed write is cut back to here."""
        self._pending: list[bytes] = []
        self._interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self._flush_scheduled = False

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        """Queue one record (written at the next loop iteration, or now outside a loop); raises after a failure."""
        if self.error is not None:
            raise self.error
        if self._fd is None:
            raise ValueError(f"{self.path}: append to a closed log")
        line = record.model_dump_json() if isinstance(record, BaseModel) else json.dumps(record, ensure_ascii=False)
        self._pending.append(line.encode("utf-8") + b"\n")
        if self._flush_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            if self.error is not None:
                raise self.error from None
            return
        self._flush_scheduled = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        """Hand queued records to the OS in one write (and fsync when the interval has passed).

        Never raises: a failure is kept in ``error``, reported to ``on_error`` and raised by the next ``append``.
        """
        self._flush_scheduled = False
        if self._fd is None or self.error is not None:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            self._size += len(data)
            now = time.monotonic()
            if now - self._last_sync >= self._interval:
                os.fsync(self._fd)
                self._last_sync = now
        except OSError as e:
            self._fail(e)

    def _fail(self, exc: OSError) -> None:
        self.error = write_error(exc, self.path)
        self._pending.clear()
        try:  # keep only complete records: cutting a file never needs free space
            os.ftruncate(self._fd, self._size)  # type: ignore[arg-type]
        except OSError:
            pass  # the torn tail is cut when the log is next opened
        if self.on_error is not None:
            self.on_error(self.error)

    def close(self) -> None:
        """Write what is queued, fsync and close; raises the write error, if any (the file stays consistent)."""
        if self._fd is None:
            return
        self.flush()
        if self.error is None:
            try:
                os.fsync(self._fd)
            except OSError as e:
                self._fail(e)
        os.close(self._fd)
        self._fd = None
        if self.error is not None:
            raise self.error

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_records(path: Path, model: type[R]) -> Iterator[tuple[int, R | None, str | None]]:
    """Yield (line number, record or None, error or None) for each non-empty line; a torn last line is skipped.

    Streams the file one line at a time: memory stays flat in the file's size.
    """
    if not path.exists():
        return
    with path.open("rb") as f:
        for i, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):
                return  # torn tail: written by a crashed process, never complete
            if not raw.strip():
                continue
            try:
                yield i, model.model_validate_json(raw), None
            except ValidationError as e:
                yield i, None, f"{path.name} line {i}: {e.errors()[0].get('msg')}"


class RunStore:
    """One run set's directory: predictions, judgments, the judge cache, manifest and summary.

    ``create=False`` opens an existing run set only (a :class:`DataError` when ``root`` is not a folder).
    """

    def __init__(self, root: Path, *, create: bool = True) -> None:
        self.root = root
        if create:
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise write_error(e, root) from None
        elif not root.is_dir():
            raise DataError(f"{root}: no such run set folder (expected one written by `zuhyo eval --out`)")
        self._read_errors: dict[str, list[str]] = {}

    @property
    def read_errors(self) -> list[str]:
        """Unreadable lines met by the latest read of each log (each said once, however often it is read)."""
        return [e for errs in self._read_errors.values() for e in errs]

    @property
    def predictions_path(self) -> Path:
        return self.root / PREDICTIONS

    @property
    def judgments_path(self) -> Path:
        return self.root / JUDGMENTS

    def _read(self, path: Path, model: type[R]) -> Iterator[R]:
        errors = self._read_errors[path.name] = []
        for _, rec, err in read_records(path, model):
            if rec is None:
                errors.append(err or "")
            else:
                yield rec

    def latest_predictions(self) -> dict[tuple[str, str, str, str, int], PredictionRecord]:
        """The last prediction per key (an ok record is never superseded by a later error for the same key)."""
        out: dict[tuple[str, str, str, str, int], PredictionRecord] = {}
        for rec in self._read(self.predictions_path, PredictionRecord):
            prev = out.get(rec.key)
            if prev is not None and prev.status == "ok" and rec.status != "ok":
                continue
            out[rec.key] = rec
        return out

    def latest_judgments(self) -> dict[tuple[str, str, str, str, int, str], JudgmentRecord]:
        out: dict[tuple[str, str, str, str, int, str], JudgmentRecord] = {}
        for rec in self._read(self.judgments_path, JudgmentRecord):
            out[rec.key] = rec
        return out

    def write_json(self, name: str, obj: Any) -> Path:
        """Atomically and durably write a JSON document (manifest, summary): temp file, fsync, rename, fsync dir.

        Readers see the old or the new document, never a mix; a failed write leaves the old one in place.
        """
        path = self.root / name
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        data = json.dumps(obj, ensure_ascii=False, indent=2, default=str).encode("utf-8")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            dir_fd = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise write_error(e, path) from None
        return path

    def read_json(self, name: str) -> Any:
        path = self.root / name
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
