"""The benchmark adapter protocol, its registry and the shared row-error collection.

An adapter is a function ``load(source, strict) -> LoadResult`` registered with :func:`benchmark`. It turns one
published layout (local files or an HF dataset id + revision) into :class:`~zuhyo.schema.Sample` objects and
collects a :class:`~zuhyo.schema.RowError` for each bad row instead of dropping it silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zuhyo.errors import DataError
from zuhyo.registry import Registry
from zuhyo.schema import RowError, Sample


@dataclass(frozen=True)
class BenchmarkSource:
    """Where to load a benchmark from: a local path, or an HF dataset id (+ revision) read via `datasets`."""

    path: Path | None = None
    hf_id: str | None = None
    revision: str | None = None
    split: str | None = None
    cache_dir: Path | None = None
    options: dict[str, str] = field(default_factory=dict)
    """Adapter-specific options (e.g. AstroChart field mapping), from ``--option key=value``."""
    allow_outside_paths: bool = False
    """Let image paths point outside the dataset's folder (``--allow-outside-paths``; see images/localfile.py)."""
    images_root: Path | None = None
    """A further folder image paths may point into (``--images-root``)."""


@dataclass
class LoadResult:
    """Samples loaded, plus every row that could not be turned into a sample."""

    benchmark: str
    samples: list[Sample]
    errors: list[RowError]
    base_dir: Path | None = None
    """Folder relative image paths are resolved against."""

    def missing_images(self) -> list[RowError]:
        """A RowError per sample whose image is absent or points at a missing local file."""
        out: list[RowError] = []
        for s in self.samples:
            if s.image is None:
                out.append(RowError(dataset=self.benchmark, row=s.id, field="image", message="no image"))
                continue
            p = s.image.resolve_path(self.base_dir)
            if p is not None and s.image.data is None and not p.is_file():
                what = "not a regular file" if p.exists() else "image file not found"
                out.append(RowError(dataset=self.benchmark, row=s.id, field="image", message=f"{what}: {p}"))
        return out


Loader = Callable[[BenchmarkSource, bool], LoadResult]


@dataclass(frozen=True)
class BenchmarkAdapter:
    """A registered benchmark: its loader and the source used when none is given."""

    name: str
    load: Loader
    default_source: Callable[[], BenchmarkSource] | None = None
    """For bundled benchmarks and those with a canonical HF id: the source used without --path/--hf."""


BENCHMARKS: Registry[BenchmarkAdapter] = Registry("benchmark")


def benchmark(name: str, description: str,
              default_source: Callable[[], BenchmarkSource] | None = None) -> Callable[[Loader], Loader]:
    """Decorator registering a loader function as benchmark ``name``."""

    def deco(fn: Loader) -> Loader:
        BENCHMARKS.add(name, BenchmarkAdapter(name, fn, default_source), description)
        return fn

    return deco


class RowErrors:
    """Collects per-row errors; with ``strict`` the first one raises :class:`DataError`."""

    def __init__(self, dataset: str, strict: bool) -> None:
        self.dataset = dataset
        self.strict = strict
        self.errors: list[RowError] = []

    def add(self, row: object, message: str, field: str | None = None) -> None:
        err = RowError(dataset=self.dataset, row=str(row), field=field, message=message)
        if self.strict:
            raise DataError(str(err))
        self.errors.append(err)

    def require(self, record: Any, key: str, row: object, kind: type | tuple[type, ...] = str) -> Any:
        """``record[key]`` when present and of type ``kind``; otherwise record an error and return None."""
        if not isinstance(record, dict):
            self.add(row, f"expected a JSON object, got {type(record).__name__}")
            return None
        if key not in record or record[key] is None:
            self.add(row, "missing field", field=key)
            return None
        value = record[key]
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            self.add(row, f"expected {names}, got {type(value).__name__}", field=key)
            return None
        return value


def read_json_file(path: Path, errors: RowErrors) -> Any:
    """Parse a JSON file, reporting unreadable files, bad encodings and bad JSON as errors naming the file."""
    import json

    try:
        raw = path.read_bytes()
    except OSError as e:
        errors.add(path.name, f"cannot read {path}: {e.strerror or e}")
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        errors.add(path.name, f"{path} is not UTF-8 (byte {e.start}: {raw[e.start:e.start + 1]!r})")
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        errors.add(path.name, f"{path} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}")
        return None


def load_benchmark(name: str, source: BenchmarkSource | None = None, *, strict: bool = False) -> LoadResult:
    """Load benchmark ``name`` from ``source`` (or its default source)."""
    from zuhyo.benchmarks import ensure_registered

    ensure_registered()
    adapter = BENCHMARKS.get(name)
    if source is None or (source.path is None and source.hf_id is None):
        if adapter.default_source is None:
            raise DataError(f"benchmark {name!r} needs --path or --hf (it has no bundled default)")
        base = adapter.default_source()
        source = base if source is None else BenchmarkSource(
            path=base.path, hf_id=base.hf_id, revision=source.revision or base.revision,
            split=source.split or base.split, cache_dir=source.cache_dir, options=source.options,
            allow_outside_paths=source.allow_outside_paths, images_root=source.images_root)
    if source.path is not None and not source.path.exists():
        raise DataError(f"benchmark {name!r}: path {source.path} does not exist")
    return _confined(adapter.load(source, strict), source, strict)


def _confined(result: LoadResult, source: BenchmarkSource, strict: bool) -> LoadResult:
    """``result`` less the samples whose image path leaves the dataset's folder, each one a row error."""
    from zuhyo.images.localfile import PathPolicy, confine_image_paths

    errors = RowErrors(result.benchmark, strict)
    policy = PathPolicy(allow_outside=source.allow_outside_paths, images_root=source.images_root)
    result.samples = confine_image_paths(result.samples, result.base_dir, policy,
                                         lambda s, msg: errors.add(s.id, msg, field="image.path"))
    result.errors += errors.errors
    return result
