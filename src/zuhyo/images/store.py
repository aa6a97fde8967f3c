"""Content-addressed image store, its URL index, and format sniffing.

Layout of a store rooted at ``root``::

    root/ab/cdef0123…<suffix>   one file per distinct content; name = SHA-256 hex of the bytes (first two
                                hex digits are the shard folder, the other 62 the file stem)
    root/index.jsonl            append-only URL index: one JSON object per fetch outcome
                                {"url", "status": "ok"|"failed", "sha256", ...}; the last record of a URL wins

Files are written atomically (temporary file in the shard folder, fsync, rename, fsync of the folder), so a
crash never leaves a half-written image under its final name. The index is append-only: a crash can at worst
leave a torn last line, which readers skip (and count) instead of failing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", ".png", "image/png"),
    (b"\xff\xd8\xff", ".jpg", "image/jpeg"),
    (b"GIF87a", ".gif", "image/gif"),
    (b"GIF89a", ".gif", "image/gif"),
    (b"BM", ".bmp", "image/bmp"),
    (b"II*\x00", ".tif", "image/tiff"),
    (b"MM\x00*", ".tif", "image/tiff"),
)

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_HASH_CHUNK = 1 << 20
INDEX_NAME = "index.jsonl"


def sniff_image_type(data: bytes) -> tuple[str, str] | None:
    """(suffix, mime) from the file's magic bytes, or None when it is not a known image format."""
    for magic, suffix, mime in _MAGIC:
        if data.startswith(magic):
            return suffix, mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp", "image/webp"
    return None


def sniff_image_suffix(data: bytes) -> str:
    """File suffix for an encoded image (``.bin`` when unknown)."""
    found = sniff_image_type(data)
    return found[0] if found else ".bin"


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of ``data``: the store key."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in chunks (store files can be large)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _check_sha(sha: str) -> str:
    if not isinstance(sha, str) or not _SHA256_RE.match(sha):
        raise ValueError(f"not a lowercase hex SHA-256: {sha!r}")
    return sha


def _fsync_dir(path: Path) -> None:
    # Durability of the rename itself needs the directory entry flushed; not possible on every platform.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class ImageStore:
    """Images keyed by the SHA-256 of their bytes, under ``root/<2 hex>/<62 hex><suffix>``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.index = UrlIndex(self.root / INDEX_NAME)

    def _shard(self, sha: str) -> tuple[Path, str]:
        sha = _check_sha(sha)
        return self.root / sha[:2], sha[2:]

    def path_for(self, sha: str) -> Path | None:
        """The stored file for ``sha`` (whatever its suffix), or None when it is not in the store."""
        folder, stem = self._shard(sha)
        if not folder.is_dir():
            return None
        for candidate in folder.glob(stem + ".*"):
            if candidate.is_file():
                return candidate
        plain = folder / stem
        return plain if plain.is_file() else None

    def has(self, sha: str) -> bool:
        """True when a file for ``sha`` is in the store (presence only; see :meth:`verify`)."""
        return self.path_for(sha) is not None

    def verify(self, sha: str) -> bool:
        """True when the file for ``sha`` is present and its bytes still hash to ``sha``."""
        p = self.path_for(sha)
        if p is None:
            return False
        try:
            return sha256_file(p) == sha
        except OSError:
            return False

    def put(self, data: bytes, suffix: str | None = None) -> tuple[str, Path]:
        """Store ``data``; returns (sha256, path). Idempotent; a corrupted existing copy is replaced.

        ``suffix`` (e.g. ``.png``) defaults to the one sniffed from the magic bytes.
        """
        sha = sha256_hex(data)
        existing = self.path_for(sha)
        if existing is not None and sha256_file(existing) == sha:
            return sha, existing
        folder, stem = self._shard(sha)
        folder.mkdir(parents=True, exist_ok=True)
        target = existing or folder / (stem + (suffix if suffix is not None else sniff_image_suffix(data)))
        tmp = folder / f".tmp-{uuid.uuid4().hex}"
        try:
            with tmp.open("wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(folder)
        return sha, target

    def __iter__(self) -> Iterator[tuple[str, Path]]:
        """(sha256, path) of every stored file."""
        for folder in sorted(self.root.iterdir()):
            if not (folder.is_dir() and len(folder.name) == 2):
                continue
            for p in sorted(folder.iterdir()):
                if p.is_file() and not p.name.startswith("."):
                    sha = folder.name + p.name.split(".", 1)[0]
                    if _SHA256_RE.match(sha):
                        yield sha, p


@dataclass
class IndexRecord:
    """The latest outcome recorded for one URL."""

    url: str
    status: str
    """``ok`` (fetched, verified, stored) or ``failed``."""
    sha256: str | None = None
    message: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Other recorded fields: bytes, width, height, format, mime, final_url, time."""


class UrlIndex:
    """Append-only JSONL map url → latest :class:`IndexRecord`, re-read when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._records: dict[str, IndexRecord] = {}
        self._stamp: tuple[int, int] | None = None
        self.bad_lines: list[int] = []
        """Line numbers that were not valid records (a torn last line after a crash, or a hand edit)."""

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return st.st_mtime_ns, st.st_size

    def records(self) -> dict[str, IndexRecord]:
        """url → latest record (the file is re-read only when its size or mtime changed)."""
        stamp = self._file_stamp()
        if stamp != self._stamp:
            self._records = self._read()
            self._stamp = stamp
        return self._records

    def _read(self) -> dict[str, IndexRecord]:
        out: dict[str, IndexRecord] = {}
        self.bad_lines = []
        if not self.path.exists():
            return out
        with self.path.open("rb") as f:
            for lineno, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                    url, status = obj.pop("url"), obj.pop("status")
                    if not isinstance(url, str) or status not in ("ok", "failed"):
                        raise ValueError(status)
                    sha = obj.pop("sha256", None)
                    if status == "ok":
                        _check_sha(sha)
                except (ValueError, KeyError, TypeError, AttributeError):
                    self.bad_lines.append(lineno)
                    continue
                out[url] = IndexRecord(url, status, sha, obj.pop("message", None), obj)
        return out

    def get(self, url: str) -> IndexRecord | None:
        """Latest record for ``url``, or None."""
        return self.records().get(url)

    def append(self, url: str, status: str, *, sha256: str | None = None, message: str | None = None,
               **extra: Any) -> None:
        """Record one outcome. One ``write`` of one line with O_APPEND, so concurrent writers do not interleave."""
        if status not in ("ok", "failed"):
            raise ValueError(f"index status must be 'ok' or 'failed', got {status!r}")
        if status == "ok":
            _check_sha(sha256 or "")
        rec: dict[str, Any] = {"url": url, "status": status}
        if sha256 is not None:
            rec["sha256"] = sha256
        if message is not None:
            rec["message"] = message
        rec.update(extra)
        line = (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        view_current = self._file_stamp() == self._stamp
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # A torn last line (crash mid-write) must not swallow this record: start on a fresh line.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            os.write(fd, line)
            grew_by_ours = os.fstat(fd).st_size == size + len(line)
        finally:
            os.close(fd)
        if view_current and grew_by_ours:
            # Keep the in-memory view current without re-reading the whole file after every append.
            self._records[url] = IndexRecord(url, status, sha256, message, dict(extra))
            self._stamp = self._file_stamp()
