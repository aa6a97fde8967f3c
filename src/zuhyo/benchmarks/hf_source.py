"""Rows out of a benchmark source: an HF dataset id (+ revision), a local dataset folder, or one table file.

Adapters that read tabular layouts (ChartQAPro, HakushoBench/JGraphQA, AstroChart) share this module:

- :func:`open_rows` turns a :class:`~zuhyo.benchmarks.base.BenchmarkSource` into labelled row dicts. An HF id or a
  local folder goes through ``datasets.load_dataset`` (which accepts a local folder of parquet/json files), a
  ``save_to_disk`` folder through ``datasets.load_from_disk``, and a single ``.json``/``.jsonl``/``.csv``/
  ``.parquet`` file through readers that report bad encodings and bad lines per row.
- :func:`image_ref_from_cell` turns an image cell (HF ``Image`` dict, raw bytes, base64, data URI, URL or path)
  into an :class:`~zuhyo.schema.ImageRef`, rejecting values that are not images.

``datasets`` and ``pyarrow`` are imported inside the functions that need them (keeps `zuhyo list` light).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zuhyo.benchmarks.base import BenchmarkSource, RowErrors, read_json_file
from zuhyo.errors import DataError
from zuhyo.schema import ImageRef, Sample

TABLE_SUFFIXES = (".parquet", ".json", ".jsonl", ".csv")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff")
_SAVE_TO_DISK_MARKERS = ("dataset_info.json", "dataset_dict.json", "state.json")


@dataclass
class Row:
    """One input row: a label that finds it again (index, line number, key) and its fields."""

    label: str
    index: int
    """0-based position among the rows read (stable for a given file/split: used for generated ids)."""
    record: Any
    """Usually a dict; anything else is reported by the adapter as a malformed row."""


@dataclass
class RowSet:
    """Rows read from a source, with the folder relative image paths resolve against and the split read."""

    rows: list[Row]
    base_dir: Path | None
    split: str | None


def check_options(source: BenchmarkSource, dataset: str, allowed: Iterable[str], prefixes: Iterable[str] = ()) -> None:
    """Raise :class:`DataError` for an ``--option`` key the adapter does not know (a typo must not be ignored)."""
    allowed = set(allowed)
    prefixes = tuple(prefixes)
    for key in source.options:
        if key not in allowed and not (prefixes and key.startswith(prefixes)):
            known = ", ".join(sorted(allowed) + [p + "*" for p in prefixes]) or "none"
            raise DataError(f"benchmark {dataset!r}: unknown option {key!r}; known options: {known}")


def open_rows(source: BenchmarkSource, errors: RowErrors, *, default_split: str | None = None) -> RowSet:
    """Read the rows of ``source`` (``--path`` or ``--hf``); file-level problems go to ``errors``.

    Split choice: an explicit ``source.split`` must exist; otherwise ``default_split`` when present, otherwise the
    only split of a single-split dataset; anything else is a :class:`DataError` listing the splits.
    """
    location: str | None = str(source.path) if source.path is not None else source.hf_id
    if location is None:
        raise DataError(f"benchmark {errors.dataset!r} needs --path or --hf")
    local = Path(location)
    if local.is_file():
        return RowSet(read_table_file(local, errors), local.parent, source.split)
    if local.is_dir():
        if any((local / m).exists() for m in _SAVE_TO_DISK_MARKERS):
            from datasets import load_from_disk

            try:
                loaded = load_from_disk(str(local))
            except (OSError, ValueError) as e:
                raise DataError(f"{local}: cannot read save_to_disk folder: {e}") from None
        else:
            loaded = _load_dataset(str(local), None, None, source.cache_dir)
        ds, split = _pick_split(loaded, source.split, default_split, location)
        return RowSet(_dataset_rows(ds), local, split)
    if source.path is not None:
        raise DataError(f"benchmark {errors.dataset!r}: path {local} does not exist")
    # Without an explicit split, load them all so a dataset whose only split is not `default_split` still loads.
    loaded = _load_dataset(location, source.revision, source.split, source.cache_dir)
    ds, split = _pick_split(loaded, source.split, default_split, location)
    return RowSet(_dataset_rows(ds), None, split)


def _load_dataset(location: str, revision: str | None, split: str | None, cache_dir: Path | None) -> Any:
    from datasets import load_dataset

    try:
        return load_dataset(location, revision=revision, split=split,
                            cache_dir=str(cache_dir) if cache_dir is not None else None)
    except Exception as e:  # noqa: BLE001 - datasets raises many types (hub, file, schema); all mean "cannot load"
        rev = f" revision {revision}" if revision else ""
        raise DataError(f"cannot load dataset {location!r}{rev}: {type(e).__name__}: {e}") from None


def _pick_split(loaded: Any, requested: str | None, default: str | None, location: str) -> tuple[Any, str | None]:
    if not hasattr(loaded, "keys"):  # already one split (loaded with split=...)
        return loaded, requested or default
    names = list(loaded.keys())
    if requested is not None:
        if requested not in names:
            raise DataError(f"{location}: no split {requested!r}; splits: {', '.join(names)}")
        return loaded[requested], requested
    if default is not None and default in names:
        return loaded[default], default
    if len(names) == 1:
        return loaded[names[0]], names[0]
    raise DataError(f"{location}: several splits ({', '.join(names)}); choose one with --split")


def _dataset_rows(ds: Any) -> list[Row]:
    """Rows of an HF ``Dataset``, with ``Image`` columns left encoded ({bytes, path}) instead of decoded to PIL."""
    from datasets import Image

    for name, feature in ds.features.items():
        if isinstance(feature, Image) and feature.decode:
            ds = ds.cast_column(name, Image(decode=False))
    return [Row(str(i), i, rec) for i, rec in enumerate(ds)]


def read_table_file(path: Path, errors: RowErrors) -> list[Row]:
    """Rows of one ``.json`` (list, or object keyed by id), ``.jsonl``, ``.csv`` or ``.parquet`` file."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        data = read_json_file(path, errors)
        if data is None:
            return []
        if isinstance(data, list):
            return [Row(f"{path.name}[{i}]", i, rec) for i, rec in enumerate(data)]
        if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()):
            return [Row(f"{path.name}[{k!r}]", i, rec) for i, (k, rec) in enumerate(data.items())]
        errors.add(path.name, "expected a JSON list of row objects (or an object mapping ids to row objects), "
                              f"got {type(data).__name__}")
        return []
    if suffix == ".jsonl":
        return _read_jsonl(path, errors)
    if suffix == ".csv":
        return _read_csv(path, errors)
    if suffix == ".parquet":
        return _read_parquet(path, errors)
    raise DataError(f"{path}: unsupported file type {path.suffix!r} (expected one of {', '.join(TABLE_SUFFIXES)})")


def _read_jsonl(path: Path, errors: RowErrors) -> list[Row]:
    rows: list[Row] = []
    try:
        lines = path.read_bytes().splitlines()
    except OSError as e:
        errors.add(path.name, f"cannot read {path}: {e.strerror or e}")
        return rows
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        label = f"{path.name} line {lineno}"
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as e:
            errors.add(label, f"not UTF-8 (byte {e.start}: {raw[e.start:e.start + 1]!r})")
            continue
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as e:
            errors.add(label, f"not valid JSON: {e.msg} at column {e.colno}")
            continue
        rows.append(Row(label, len(rows), rec))
    return rows


def _read_csv(path: Path, errors: RowErrors) -> list[Row]:
    import csv
    import io

    try:
        raw = path.read_bytes()
    except OSError as e:
        errors.add(path.name, f"cannot read {path}: {e.strerror or e}")
        return []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        errors.add(path.name, f"{path} is not UTF-8 (byte {e.start}: {raw[e.start:e.start + 1]!r})")
        return []
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[Row] = []
    try:
        for rec in reader:
            label = f"{path.name} line {reader.line_num}"
            if None in rec:  # more cells than header columns: the row is misaligned, its fields cannot be trusted
                errors.add(label, f"{len(rec[None]) + len(reader.fieldnames or [])} cells for "
                                  f"{len(reader.fieldnames or [])} header columns")
                continue
            # An empty CSV cell means "no value"; a missing trailing cell arrives as None already.
            rows.append(Row(label, len(rows), {k: (None if v == "" else v) for k, v in rec.items()}))
    except csv.Error as e:
        errors.add(f"{path.name} line {reader.line_num}", f"malformed CSV: {e}")
    return rows


def _read_parquet(path: Path, errors: RowErrors) -> list[Row]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as e:
        errors.add(path.name, f"{path} is not a readable Parquet file: {e}")
        return []
    return [Row(f"{path.name}[{i}]", i, rec) for i, rec in enumerate(table.to_pylist())]


def image_ref_from_cell(value: Any, base_dir: Path | None) -> ImageRef:
    """An :class:`ImageRef` for one image cell; raises ``ValueError`` (with a user-facing message) when unusable.

    Accepted: an HF ``Image`` cell ``{"bytes": ..., "path": ...}``; raw image bytes; a ``data:image/...;base64,``
    URI; an http(s) URL; a file path (with an image suffix, relative to ``base_dir``); bare base64 image data.
    """
    if isinstance(value, dict):
        data, path = value.get("bytes"), value.get("path")
        if data is not None:
            return image_ref_from_bytes(data)
        if isinstance(path, str) and path:
            return ImageRef(path=path)
        raise ValueError("image cell has neither bytes nor a path")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return image_ref_from_bytes(bytes(value))
    if not isinstance(value, str):
        raise ValueError(f"expected image bytes, base64, a URL or a path, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise ValueError("empty image reference")
    if text.startswith(("http://", "https://")):
        return ImageRef(url=text)
    if text.startswith("data:"):
        head, _, payload = text.partition(",")
        if not head.endswith(";base64") or not head[5:].startswith("image/"):
            raise ValueError(f"unsupported data URI header {head[:40]!r} (expected data:image/...;base64)")
        return image_ref_from_bytes(_b64(payload))
    if len(text) < 1024 and Path(text).suffix.lower() in _IMAGE_SUFFIXES:
        return ImageRef(path=text)
    return image_ref_from_bytes(_b64(text))


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"neither a URL, an image file path nor base64 image data: {text[:40]!r}") from None


def image_ref_from_bytes(data: bytes) -> ImageRef:
    """Embedded image bytes with sha256 and MIME type; ``ValueError`` when the bytes are not a known image format."""
    from zuhyo.images.store import sniff_image_type  # local import: images/ sits beside benchmarks/, no cycle

    if not data:
        raise ValueError("empty image bytes")
    kind = sniff_image_type(data)
    if kind is None:
        raise ValueError(f"embedded bytes are not a PNG/JPEG/GIF/BMP/WEBP image (starts with {data[:8]!r})")
    return ImageRef(data=data, sha256=hashlib.sha256(data).hexdigest(), mime=kind[1])


def reject_duplicate_ids(samples: list[Sample], errors: RowErrors) -> list[Sample]:
    """Keep the first sample of each id; every later one becomes a RowError (ids must be unique per benchmark)."""
    seen: set[str] = set()
    out: list[Sample] = []
    for s in samples:
        if s.id in seen:
            errors.add(s.id, "duplicate id (an earlier row has the same id)", field="id")
            continue
        seen.add(s.id)
        out.append(s)
    return out
