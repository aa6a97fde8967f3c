"""The run store: a directory of append-only JSONL logs.

Writes go through :class:`AppendLog`. Inside an event loop, records appended during one loop iteration are
handed to the OS together at the start of the next (group commit: one ``write`` syscall for all the requests
that finished together, instead of one each — measured at ~70 µs per record). Outside a loop every record is
flushed at once. Either way a SIGKILL loses only requests still in flight (or finished within the same loop
iteration), and ``fsync`` runs at most every ``fsync_interval_s`` and on close, so a power loss loses at most
that window. A torn final line left by a crash is cut off when the
log is reopened, before anything is appended after it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from zuhyo.evaluate.records import JudgmentRecord, PredictionRecord

R = TypeVar("R", bound=BaseModel)

PREDICTIONS = "predictions.jsonl"
JUDGMENTS = "judgments.jsonl"
JUDGE_CACHE = "judge_cache.jsonl"
MANIFEST = "run.json"
SUMMARY = "summary.json"


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
    """An append-only JSONL file with batched fsync."""

    def __init__(self, path: Path, fsync_interval_s: float = 1.0) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.repaired_bytes = repair_torn_tail(path)
        self._f = path.open("ab")
        self._interval = fsync_interval_s
        self._last_sync = time.monotonic()
        self._flush_scheduled = False

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        line = record.model_dump_json() if isinstance(record, BaseModel) else json.dumps(record, ensure_ascii=False)
        self._f.write(line.encode("utf-8") + b"\n")
        if self._flush_scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._flush_scheduled = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        """Hand buffered records to the OS (and fsync when the interval has passed)."""
        self._flush_scheduled = False
        if self._f.closed:
            return
        self._f.flush()
        now = time.monotonic()
        if now - self._last_sync >= self._interval:
            os.fsync(self._f.fileno())
            self._last_sync = now

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_records(path: Path, model: type[R]) -> Iterator[tuple[int, R | None, str | None]]:
    """Yield (line number, record or None, error or None) for each non-empty line; a torn last line is skipped."""
    if not path.exists():
        return
    with path.open("rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] != b"":
        lines = lines[:-1]  # torn tail: written by a crashed process, never complete
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            yield i, model.model_validate_json(raw), None
        except ValidationError as e:
            yield i, None, f"{path.name} line {i}: {e.errors()[0].get('msg')}"


class RunStore:
    """One run set's directory: predictions, judgments, the judge cache, manifest and summary."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.read_errors: list[str] = []

    @property
    def predictions_path(self) -> Path:
        return self.root / PREDICTIONS

    @property
    def judgments_path(self) -> Path:
        return self.root / JUDGMENTS

    def latest_predictions(self) -> dict[tuple[str, str, str, str, int], PredictionRecord]:
        """The last prediction per key (an ok record is never superseded by a later error for the same key)."""
        out: dict[tuple[str, str, str, str, int], PredictionRecord] = {}
        for _, rec, err in read_records(self.predictions_path, PredictionRecord):
            if rec is None:
                self.read_errors.append(err or "")
                continue
            prev = out.get(rec.key)
            if prev is not None and prev.status == "ok" and rec.status != "ok":
                continue
            out[rec.key] = rec
        return out

    def latest_judgments(self) -> dict[tuple[str, str, str, str, int, str], JudgmentRecord]:
        out: dict[tuple[str, str, str, str, int, str], JudgmentRecord] = {}
        for _, rec, err in read_records(self.judgments_path, JudgmentRecord):
            if rec is None:
                self.read_errors.append(err or "")
                continue
            out[rec.key] = rec
        return out

    def write_json(self, name: str, obj: Any) -> Path:
        """Atomically write a JSON document (manifest, summary)."""
        path = self.root / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
        os.replace(tmp, path)
        return path

    def read_json(self, name: str) -> Any:
        path = self.root / name
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
