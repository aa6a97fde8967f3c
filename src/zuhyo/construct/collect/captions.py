"""The optional captions CSV of ``zuhyo collect folder``: one row per image file, matched by path or file name."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from zuhyo.errors import DataError

#: CSV columns that fill :class:`zuhyo.schema.Figure` fields; any other column goes to the figure's provenance.
FIGURE_COLUMNS = ("caption", "figure_number", "context", "page", "section", "page_url", "paper_id",
                  "back_data_url", "edition", "year")


def read_captions(path: Path) -> dict[str, dict[str, Any]]:
    """``file`` value → figure fields (and ``provenance`` for unknown columns) from a UTF-8 CSV (BOM allowed).

    Empty cells are left unset. ``context`` holds one paragraph. Raises :class:`DataError` naming the row for a
    missing ``file`` column, an empty or repeated file, or a year that is not a whole number.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"captions file {path}: cannot read as UTF-8 text: {e}") from None
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames is None or "file" not in reader.fieldnames:
        raise DataError(f"captions file {path}: needs a 'file' column (found: {', '.join(reader.fieldnames or [])})")
    out: dict[str, dict[str, Any]] = {}
    for lineno, row in enumerate(reader, start=2):
        name = (row.get("file") or "").strip().replace("\\", "/")
        if not name:
            raise DataError(f"captions file {path} line {lineno}: empty 'file'")
        if name in out:
            raise DataError(f"captions file {path} line {lineno}: {name!r} appears twice")
        fields: dict[str, Any] = {}
        extra: dict[str, str] = {}
        for key, value in row.items():
            if key is None or key == "file" or value is None or not value.strip():
                continue
            value = value.strip()
            if key == "year":
                if not value.isdigit():
                    raise DataError(f"captions file {path} line {lineno}: year {value!r} is not a whole number")
                fields["year"] = int(value)
            elif key == "context":
                fields["context"] = [value]
            elif key in FIGURE_COLUMNS:
                fields[key] = value
            else:
                extra[key] = value
        if extra:
            fields["provenance"] = {"csv": extra}
        out[name] = fields
    return out


def match_captions(captions: dict[str, dict[str, Any]], files: list[str]) -> tuple[dict[str, dict[str, Any]],
                                                                                  list[str]]:
    """(relative path → caption fields, CSV names that match no file).

    A CSV name matches a file by its path relative to the folder, or else by file name when exactly one file in
    the folder has that name.
    """
    by_path = set(files)
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    matched: dict[str, dict[str, Any]] = {}
    unmatched: list[str] = []
    for name, fields in captions.items():
        target = name[2:] if name.startswith("./") else name
        if target in by_path:
            matched[target] = fields
        elif len(by_name.get(target, [])) == 1:
            matched[by_name[target][0]] = fields
        else:
            unmatched.append(name)
    return matched, unmatched
