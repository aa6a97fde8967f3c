"""`chartqa`: the ChartQA test set in its original release layout, and the ChartQA-Split annotation files.

Original layout (vis-nlp/ChartQA, "ChartQA Dataset/test"): ``test/test_human.json`` and ``test/test_augmented.json``
hold rows ``{"imgname", "query", "label"}``; the charts are ``test/png/<imgname>``. ``--path`` may be the folder
above ``test/``, ``test/`` itself, or one JSON file (images from ``--option images=DIR``, else a ``png/`` folder
beside it).

ChartQA-Split (RobustCQA/ChartQA-Split, arXiv 2407.11229) re-partitions the same test rows into eight files named
``<chart complexity>_test_<human|augmented>_<question complexity>.json`` (same row shape). Select them with
``--option annotations=split`` (reads ``split_annotations/`` under ``--path``) or by pointing ``--path`` at that
folder or one of its files. Their images are the ChartQA test ``png/`` folder.

Sample ids are ``<split>/<row index, 4 digits>`` (``human/0007``) for the original files and
``<file stem>/<row index>`` for ChartQA-Split files, so they are stable across loads. Image types are left unset:
ChartQA does not annotate them.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, RowErrors, benchmark, read_json_file
from zuhyo.benchmarks.hf_source import check_options
from zuhyo.errors import DataError
from zuhyo.schema import ImageRef, Sample

SPLITS = ("human", "augmented")
_ORIGINAL_FILES = {"human": "test_human.json", "augmented": "test_augmented.json"}
_SPLIT_FILE = re.compile(r"^(simple|complex)_test_(human|augmented)_(simple|complex)$")


def _annotation_files(source: BenchmarkSource) -> tuple[list[Path], list[Path]]:
    """(JSON files to read, candidate image folders in order of preference) for ``source.path``."""
    path = source.path
    assert path is not None  # noqa: S101 - checked by the caller
    mode = source.options.get("annotations", "original")
    if mode not in ("original", "split"):
        raise DataError(f"chartqa: option annotations must be 'original' or 'split', got {mode!r}")
    if path.is_file():
        return [path], [path.parent / "png", path.parent.parent / "test" / "png"]
    is_split_dir = any(_SPLIT_FILE.match(p.stem) for p in path.glob("*.json"))
    if mode == "split" or is_split_dir:
        folder = path / "split_annotations" if (path / "split_annotations").is_dir() else path
        files = sorted(p for p in folder.glob("*.json") if _SPLIT_FILE.match(p.stem))
        if not files:
            raise DataError(f"chartqa: no ChartQA-Split files (<simple|complex>_test_<human|augmented>_"
                            f"<simple|complex>.json) in {folder}")
        return files, [path / "test" / "png", folder / "png", folder.parent / "test" / "png"]
    test = path / "test" if (path / "test").is_dir() else path
    files = [test / name for name in _ORIGINAL_FILES.values() if (test / name).is_file()]
    if not files:
        raise DataError(f"chartqa: {path} has neither test/test_human.json nor test/test_augmented.json "
                        "(use --option annotations=split for ChartQA-Split files)")
    return files, [test / "png"]


def _file_split(path: Path) -> tuple[str | None, str, dict[str, str]]:
    """(split, id prefix, extra metadata) from a ChartQA or ChartQA-Split file name."""
    m = _SPLIT_FILE.match(path.stem)
    if m:
        return m.group(2), path.stem, {"chart_complexity": m.group(1), "question_complexity": m.group(3)}
    for split, name in _ORIGINAL_FILES.items():
        if path.name == name:
            return split, split, {}
    found = [s for s in SPLITS if s in path.stem.lower()]
    return (found[0] if len(found) == 1 else None), path.stem, {}


def _safe_image_name(name: str) -> bool:
    # An image name is a file inside the image folder: no absolute paths, no climbing out with "..".
    p = PurePosixPath(name.replace("\\", "/"))
    return bool(name.strip()) and not p.is_absolute() and ".." not in p.parts


def read_chartqa_file(path: Path, errors: RowErrors, split_filter: str | None) -> list[Sample]:
    """Samples of one ChartQA-shaped JSON file (a list of ``{imgname, query, label}``); bad rows go to ``errors``."""
    split, prefix, extra = _file_split(path)
    if split_filter is not None and split != split_filter:
        return []
    data = read_json_file(path, errors)
    if data is None:
        return []
    if not isinstance(data, list):
        errors.add(path.name, f"expected a JSON list of rows, got {type(data).__name__}")
        return []
    samples: list[Sample] = []
    for i, rec in enumerate(data):
        row = f"{path.name}[{i}]"
        imgname = errors.require(rec, "imgname", row)
        query = errors.require(rec, "query", row)
        if imgname is None or query is None:
            continue
        label = rec.get("label")
        if isinstance(label, (int, float)) and not isinstance(label, bool):
            label = str(label)  # some re-releases store numeric labels as JSON numbers; the value is unambiguous
        elif label is None:
            errors.add(row, "missing field", field="label")
            continue
        elif not isinstance(label, str):
            errors.add(row, f"expected str, got {type(label).__name__}", field="label")
            continue
        if not query.strip():
            errors.add(row, "empty question", field="query")
            continue
        if not label.strip():
            errors.add(row, "empty answer", field="label")
            continue
        if not _safe_image_name(imgname):
            errors.add(row, f"image name must be a file name inside the image folder, got {imgname!r}",
                       field="imgname")
            continue
        meta = {"imgname": imgname, "annotation_file": path.name, **extra}
        samples.append(Sample(id=f"{prefix}/{i:04d}", benchmark="chartqa", question=query, answers=[label],
                              image=ImageRef(path=imgname), split=split, metadata=meta))
    return samples


@benchmark("chartqa", "ChartQA test set (test_human/test_augmented JSON + png/), or ChartQA-Split files "
                      "(--option annotations=split); --split human|augmented")
def load_chartqa(source: BenchmarkSource, strict: bool) -> LoadResult:
    """Load ChartQA from ``--path`` (see the module docstring for the layouts accepted)."""
    check_options(source, "chartqa", ("images", "annotations"))
    if source.path is None:
        raise DataError("benchmark 'chartqa' needs --path (the ChartQA folder, its test/ folder or a JSON file)")
    if source.split is not None and source.split not in SPLITS:
        raise DataError(f"chartqa: --split must be one of {', '.join(SPLITS)}, got {source.split!r}")
    files, image_dirs = _annotation_files(source)
    if "images" in source.options:
        images = Path(source.options["images"])
        if not images.is_dir():
            raise DataError(f"chartqa: option images={images} is not a folder")
    else:
        images = next((d for d in image_dirs if d.is_dir()), image_dirs[0])
    errors = RowErrors("chartqa", strict)
    samples: list[Sample] = []
    for f in files:
        samples += read_chartqa_file(f, errors, source.split)
    return LoadResult("chartqa", samples, errors.errors, base_dir=images)
