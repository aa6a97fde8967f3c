"""arXiv LaTeX sources on disk: safe tarball extraction, the paper id, the main file, ``\\input``/``\\include``.

DomainCQA §4.1 builds its pool from arXiv papers' figures; arXiv hands sources out as folders or tarballs
(``.tar.gz``, ``.tgz``, ``.tar``; a single gzipped ``.tex`` too). A tarball is extracted into a temporary folder
member by member: only regular files, no absolute paths or ``..``, no links, under a member-count and a byte cap,
so a hostile archive can neither write outside the folder nor fill the disk.
"""

from __future__ import annotations

import gzip
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from zuhyo.construct.collect.latex_text import strip_comments
from zuhyo.construct.collect.paths import inside
from zuhyo.errors import DataError

MAX_MEMBERS = 20_000
MAX_TOTAL_BYTES = 1 << 30
MAX_TEX_BYTES = 20 << 20
MAX_INCLUDE_DEPTH = 32
TARBALL_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".gz")

_NEW_ID = re.compile(r"(?<!\d)(\d{4}\.\d{4,5})(v\d+)?(?!\d)")
_OLD_ID = re.compile(r"\b([a-z][a-z-]+(?:\.[A-Z]{2})?)[_/]?(\d{7})(v\d+)?\b")
_INCLUDE = re.compile(r"\\(input|include|subfile)(?![A-Za-z])\s*(?:\{([^{}]*)\}|([^\s{}\\]+))")


def paper_id_from_name(path: Path) -> str:
    """The arXiv id in a folder or tarball name (``2101.01234v2``, ``astro-ph_0701001`` → ``astro-ph/0701001``);
    the name without its archive suffix when there is none."""
    name = path.name
    for suffix in TARBALL_SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    if m := _NEW_ID.search(name):
        return m.group(1) + (m.group(2) or "")
    if m := _OLD_ID.search(name):
        return f"{m.group(1)}/{m.group(2)}{m.group(3) or ''}"
    return name


@dataclass
class Extracted:
    root: Path
    skipped: list[str] = field(default_factory=list)
    """Archive members left out, with why (links, unsafe paths)."""


@contextmanager
def opened_source(src: Path, max_total_bytes: int = MAX_TOTAL_BYTES, tmp_root: Path | None = None
                  ) -> Iterator[Extracted]:
    """The source as a folder: ``src`` itself, or a temporary extraction of the tarball under ``tmp_root`` (the
    workspace's scratch folder; the system's temporary folder without it), removed afterwards."""
    if src.is_dir():
        yield Extracted(src)
        return
    if not src.is_file():
        raise DataError(f"{src}: not found")
    tmp = Path(tempfile.mkdtemp(prefix="zuhyo-latex-", dir=tmp_root))
    try:
        yield _extract(src, tmp, max_total_bytes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _extract(src: Path, dest: Path, max_total_bytes: int) -> Extracted:
    out = Extracted(dest)
    try:
        tf = tarfile.open(src)
    except (tarfile.ReadError, zlib.error):
        return _gunzip_single(src, dest, max_total_bytes)
    except OSError as e:
        raise DataError(f"{src}: cannot read: {e}") from None
    total = 0
    with tf:
        try:
            for n, member in enumerate(tf):
                if n >= MAX_MEMBERS:
                    raise DataError(f"{src}: more than {MAX_MEMBERS:,} archive members")
                rel = PurePosixPath(member.name)
                if member.isdir():
                    continue
                if not member.isfile():
                    out.skipped.append(f"{member.name}: not a regular file (link or device)")
                    continue
                if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                    out.skipped.append(f"{member.name}: path leaves the archive folder")
                    continue
                total += member.size
                if total > max_total_bytes:
                    raise DataError(f"{src}: unpacks to more than {max_total_bytes:,} bytes")
                target = dest.joinpath(*rel.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                stream = tf.extractfile(member)
                if stream is None:
                    continue
                with stream, target.open("wb") as fh:
                    shutil.copyfileobj(stream, fh)
        except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
            raise DataError(f"{src}: broken archive: {e}") from None
    return out


def _gunzip_single(src: Path, dest: Path, max_total_bytes: int) -> Extracted:
    """arXiv serves a paper that is one .tex file as that file gzipped."""
    try:
        with gzip.open(src, "rb") as fh:
            data = fh.read(max_total_bytes + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(f"{src}: neither a tar archive nor a gzipped file ({e})") from None
    if len(data) > max_total_bytes:
        raise DataError(f"{src}: unpacks to more than {max_total_bytes:,} bytes")
    (dest / "main.tex").write_bytes(data)
    return Extracted(dest)


def read_tex(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_TEX_BYTES:
        raise DataError(f"{path.name} is {size:,} bytes, over the {MAX_TEX_BYTES:,}-byte limit for one .tex file")
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def find_main_file(root: Path) -> Path:
    """The ``.tex`` file with ``\\documentclass`` (the one with ``\\begin{document}``, then the largest).

    Files over :data:`MAX_TEX_BYTES` and links leaving ``root`` are not read; when no other file qualifies, the
    error says which were left out and why."""
    candidates = []
    left_out = []
    for p in sorted(root.rglob("*.tex")):
        if not inside(root, p):
            if p.is_symlink():
                left_out.append(f"{p.relative_to(root).as_posix()} is a link leaving the source folder (not read)")
            continue
        size = p.stat().st_size
        if size > MAX_TEX_BYTES:
            left_out.append(f"{p.relative_to(root).as_posix()} is {size:,} bytes, over the {MAX_TEX_BYTES:,}-byte "
                            "limit for one .tex file (not read)")
            continue
        text = strip_comments(read_tex(p))
        if "\\documentclass" in text:
            candidates.append(("\\begin{document}" in text, size, p))
    if not candidates:
        raise DataError("no .tex file with \\documentclass in the source"
                        + (f" ({'; '.join(left_out[:3])})" if left_out else ""))
    return max(candidates, key=lambda c: (c[0], c[1]))[2]


def resolve_in(root: Path, name: str, suffixes: tuple[str, ...], dirs: tuple[str, ...] = ("",)) -> Path | None:
    """The file ``name`` names under ``root`` (LaTeX looks relative to the main file's folder).

    Tried: each of ``dirs`` (``\\graphicspath``) joined with the name, the name with each suffix, and the
    *flattened* name (folders joined with ``_``, the layout of some source mirrors). Paths that leave ``root``
    are never returned.
    """
    name = name.strip().strip('"')
    root = root.resolve()
    for d in dirs:
        base = PurePosixPath(d) / name if d else PurePosixPath(name)
        flat = PurePosixPath(str(base).replace("/", "_"))
        for candidate in (base, flat):
            for suffix in ("", *suffixes):
                p = root / (str(candidate) + suffix)
                if inside(root, p):
                    return p.resolve()
    return None


@dataclass
class Inlined:
    text: str
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """``\\input`` that failed: missing file, cycle, too deep."""


def inline_includes(root: Path, main: Path) -> Inlined:
    """The main file with every ``\\input``/``\\include`` replaced by the file's text, recursively.

    Comments are stripped first (a commented-out ``\\input`` is not followed); a file that includes itself
    through any chain is an error, not a loop.
    """
    out = Inlined("")
    out.text = _inline(root, main, (main.resolve(),), out)
    return out


def _inline(root: Path, path: Path, stack: tuple[Path, ...], out: Inlined) -> str:
    out.files.append(path.relative_to(root.resolve()).as_posix() if path.is_relative_to(root.resolve())
                     else path.name)
    text = strip_comments(read_tex(path))

    def replace(m: re.Match[str]) -> str:
        name = (m.group(2) or m.group(3) or "").strip()
        shown = f"\\{m.group(1)}{{{name}}}"
        target = resolve_in(root, name, (".tex",))
        if target is None:
            out.errors.append(f"{shown}: file not found")
            return ""
        if target in stack:
            chain = " → ".join(p.name for p in (*stack, target))
            out.errors.append(f"{shown}: include cycle ({chain}); not followed")
            return ""
        if len(stack) >= MAX_INCLUDE_DEPTH:
            out.errors.append(f"{shown}: includes nested deeper than {MAX_INCLUDE_DEPTH}")
            return ""
        inner = _inline(root, target, (*stack, target), out)
        # \include starts a new page (a paragraph break); \input inserts the text where it stands.
        return f"\n\n{inner}\n\n" if m.group(1) == "include" else inner.rstrip("\n")

    return _INCLUDE.sub(replace, text)
