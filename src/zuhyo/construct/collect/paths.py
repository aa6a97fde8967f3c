"""The one rule for the files of a source: never read through a link that leaves the source's folder."""

from __future__ import annotations

from pathlib import Path


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, its links followed, is a regular file inside ``root``: a folder source's ``main.tex``, an
    ``\\input`` file, a graphic or a folder's image is read only then (a link to ``/etc/passwd`` is not)."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a link loop
        return False
    return resolved.is_relative_to(root.resolve()) and resolved.is_file()
