"""`local`: samples in zuhyo's own schema — a JSONL file, a Parquet file, or an HF `save_to_disk` folder.

Also the writer used by `zuhyo bench export`: JSONL with images copied beside the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, RowErrors, benchmark
from zuhyo.schema import Sample, sample_from_flat, sample_from_json, sample_to_flat, sample_to_json


def _validation_message(e: ValidationError) -> tuple[str, str | None]:
    first = e.errors()[0]
    loc = ".".join(str(x) for x in first.get("loc", ())) or None
    return first.get("msg", str(e)), loc


def read_jsonl(path: Path, errors: RowErrors) -> list[Sample]:
    """Read zuhyo-schema JSONL; each bad line becomes a RowError naming its line number and field."""
    samples: list[Sample] = []
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as e:
                errors.add(f"line {lineno}", f"not UTF-8 (byte {e.start})")
                continue
            try:
                samples.append(sample_from_json(line))
            except ValidationError as e:
                msg, loc = _validation_message(e)
                errors.add(f"line {lineno}", msg, field=loc)
    return samples


def read_parquet(path: Path, errors: RowErrors) -> list[Sample]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return _from_rows(table.to_pylist(), errors)


def _from_rows(rows: list[dict], errors: RowErrors) -> list[Sample]:
    samples: list[Sample] = []
    for i, row in enumerate(rows):
        missing = [c for c in ("id", "benchmark", "question", "answers") if c not in row]
        if missing:
            errors.add(i, "missing column", field=missing[0])
            continue
        try:
            samples.append(sample_from_flat(row))
        except (ValidationError, ValueError, TypeError) as e:
            if isinstance(e, ValidationError):
                msg, loc = _validation_message(e)
            else:
                msg, loc = str(e), None
            errors.add(row.get("id", i), msg, field=loc)
    return samples


def write_parquet(samples: list[Sample], path: Path, *, extra_columns: dict[str, list[str]] | None = None) -> None:
    """Write samples as a flat Parquet table (columns :data:`~zuhyo.schema.FLAT_COLUMNS`), plus ``extra_columns``
    (string columns, one value per sample, e.g. an export's ``provenance``; readers of the flat form ignore
    them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [sample_to_flat(s) for s in samples]
    table = pa.Table.from_pylist(rows, schema=_flat_schema())
    for name, values in (extra_columns or {}).items():
        if len(values) != len(rows):
            raise ValueError(f"extra column {name!r} has {len(values)} values for {len(rows)} samples")
        table = table.append_column(name, pa.array(values, type=pa.string()))
    pq.write_table(table, path)


def _flat_schema():  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.schema([
        ("id", pa.string()), ("benchmark", pa.string()), ("question", pa.string()),
        ("answers", pa.list_(pa.string())), ("image_bytes", pa.binary()), ("image_path", pa.string()),
        ("image_url", pa.string()), ("image_sha256", pa.string()), ("image_width", pa.int64()),
        ("image_height", pa.int64()), ("image_mime", pa.string()), ("meta_json", pa.string()),
    ])



def _undecoded(ds: Any) -> Any:
    """``ds`` with its ``datasets.Image`` columns (an export's ``image``) as ``{bytes, path}``, not PIL images."""
    from datasets import Image

    for name, feature in ds.features.items():
        if isinstance(feature, Image) and feature.decode:
            ds = ds.cast_column(name, Image(decode=False))
    return ds


@benchmark("local", "Samples in zuhyo's own schema: a .jsonl or .parquet file, or an HF save_to_disk folder")
def load_local(source: BenchmarkSource, strict: bool) -> LoadResult:
    if source.path is None:
        from zuhyo.errors import DataError

        raise DataError("benchmark 'local' needs --path (a .jsonl, .parquet or save_to_disk folder)")
    path = source.path
    errors = RowErrors(path.name, strict)
    if path.is_dir():
        if (path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists():
            from datasets import load_from_disk

            ds = load_from_disk(str(path))
            if hasattr(ds, "keys"):  # a DatasetDict: take the requested split or the only one
                split = source.split or next(iter(ds.keys()))
                ds = ds[split]
            samples = _from_rows(list(_undecoded(ds)), errors)
        else:
            files = sorted(path.glob("*.jsonl")) + sorted(path.glob("*.parquet"))
            if not files:
                from zuhyo.errors import DataError

                raise DataError(f"{path}: no .jsonl or .parquet file and not a save_to_disk folder")
            samples = []
            for f in files:
                samples += read_jsonl(f, errors) if f.suffix == ".jsonl" else read_parquet(f, errors)
        base = path
    elif path.suffix == ".parquet":
        samples, base = read_parquet(path, errors), path.parent
    else:
        samples, base = read_jsonl(path, errors), path.parent
    name = samples[0].benchmark if samples and len({s.benchmark for s in samples}) == 1 else "local"
    return LoadResult(name, samples, errors.errors, base_dir=base)


def export_jsonl(result: LoadResult, out: Path, *, embed: bool = False) -> dict[str, int]:
    """Write ``result`` as zuhyo JSONL; local images are copied into ``<out stem>_images/`` beside the file.

    Embedded images are written out as files too (unless ``embed``), so the JSONL stays small and greppable.
    Returns counts: samples, images_copied, images_missing.
    """
    from zuhyo.errors import ImageError
    from zuhyo.images.localfile import read_regular_file  # local imports: keep `zuhyo list` light
    from zuhyo.images.store import sniff_image_suffix

    out.parent.mkdir(parents=True, exist_ok=True)
    img_dir_name = f"{out.stem}_images"
    img_dir = out.parent / img_dir_name
    copied = missing = 0
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for s in result.samples:
            img = s.image
            if img is not None and not embed:
                src = img.resolve_path(result.base_dir)
                data = img.data
                if data is None and src is not None:
                    try:  # regular files only, with a size cap: never a device, FIFO or directory
                        data = read_regular_file(src, label=f"{s.id} ({src})")
                    except ImageError:
                        data = None
                if data is not None:
                    import hashlib

                    digest = img.sha256 or hashlib.sha256(data).hexdigest()
                    name = f"{digest[:16]}{sniff_image_suffix(data)}"
                    img_dir.mkdir(exist_ok=True)
                    target = img_dir / name
                    if not target.exists():
                        target.write_bytes(data)
                    copied += 1
                    img = img.model_copy(update={"path": f"{img_dir_name}/{name}", "data": None,
                                                 "sha256": digest})
                elif img.url is None:
                    missing += 1
                s = s.model_copy(update={"image": img})
            f.write(sample_to_json(s) + "\n")
    tmp.replace(out)
    return {"samples": len(result.samples), "images_copied": copied, "images_missing": missing}
