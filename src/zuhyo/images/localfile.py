"""Local image files a dataset points at: confined to the dataset's folder, regular files only, read with a cap.

A benchmark file is input zuhyo does not control. Its image paths are therefore checked before anything reads
them (:func:`confine_image_paths`, applied by :func:`~zuhyo.benchmarks.base.load_benchmark`): a relative path
must stay inside the folder it is resolved against *after symlinks are resolved*; an absolute path, a ``../``
escape or a symlink leading out is a per-item error unless the user allows it (``--allow-outside-paths``) or
names a folder that may hold images too (``--images-root DIR``). Reading (:func:`read_regular_file`) accepts only
regular files, so ``/dev/zero`` or a FIFO is a per-item error instead of an endless read or a hang, and stops
at a byte cap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from zuhyo.errors import ImageError
from zuhyo.schema import Sample

MAX_IMAGE_FILE_BYTES = 256 * 1024 * 1024
"""Largest local image file read (a 100-Mpixel PNG, the decoder's own limit, fits well below this)."""


@dataclass(frozen=True)
class PathPolicy:
    """Where a dataset's local image paths may point."""

    allow_outside: bool = False
    """Follow absolute paths and escapes anywhere (``--allow-outside-paths``): the dataset is trusted."""
    images_root: Path | None = None
    """A further folder images may live in (``--images-root``), for absolute paths or links into it."""


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def confine_path(path: str, base_dir: Path | None, policy: PathPolicy) -> Path:
    """The file ``path`` names, with symlinks resolved, once checked against ``policy``; :class:`ImageError`
    (saying why and how to allow it) when it lies outside the dataset folder ``base_dir`` and the images root."""
    p = Path(path)
    target = p if p.is_absolute() or base_dir is None else base_dir / p
    resolved = Path(os.path.realpath(target))
    if policy.allow_outside:
        return resolved
    roots = [Path(os.path.realpath(r)) for r in (base_dir, policy.images_root) if r is not None]
    if any(_inside(resolved, r) for r in roots):
        return resolved
    if not roots:
        where = "there is no dataset folder to confine it to"
    elif p.is_absolute():
        where = f"absolute path outside {' and '.join(map(str, roots))}"
    elif resolved != Path(os.path.abspath(target)):
        where = f"a symlink leads out of {' and '.join(map(str, roots))} (to {resolved})"
    else:
        where = f"escapes {' and '.join(map(str, roots))}"
    raise ImageError(f"image path {path!r}: {where}; pass --allow-outside-paths or --images-root DIR to allow it")


def confine_image_paths(samples: list[Sample], base_dir: Path | None, policy: PathPolicy,
                        on_error: Callable[[Sample, str], None]) -> list[Sample]:
    """The samples whose local image path (if any) passes :func:`confine_path`; ``on_error(sample, message)``
    for each of the others. Embedded bytes win over a path (the path is never read), so they are not checked."""
    kept: list[Sample] = []
    for s in samples:
        img = s.image
        if img is not None and img.path is not None and img.data is None:
            try:
                confine_path(img.path, base_dir, policy)
            except ImageError as e:
                on_error(s, str(e))
                continue
        kept.append(s)
    return kept


def read_regular_file(path: Path, *, max_bytes: int = MAX_IMAGE_FILE_BYTES, label: str | None = None) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes``; :class:`ImageError` else.

    The type is checked with ``stat`` before opening (a device or FIFO is never opened) and again with ``fstat``
    on the descriptor, which is opened non-blocking so that a FIFO swapped in meanwhile cannot hang the read.
    """
    name = label or str(path)
    try:
        st = os.stat(path)
        _check_stat(st, name, max_bytes)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise ImageError(f"cannot read image {name}: {e.strerror or e}") from None
    try:
        _check_stat(os.fstat(fd), name, max_bytes)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise ImageError(f"cannot read image {name}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ImageError(f"image {name} grew past the {max_bytes:,}-byte limit while being read")
    return data


def _check_stat(st: os.stat_result, name: str, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ImageError(f"image {name} is not a regular file ({_kind(st.st_mode)}); refusing to read it")
    if st.st_size > max_bytes:
        raise ImageError(f"image {name} is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit")


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a plain file"
