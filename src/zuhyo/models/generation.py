"""Changes to a :class:`~zuhyo.models.base.GenerationConfig`, per prompt style: what a model preset or a run
config states (HakushoBench §5.1: temperature 0 except GPT-5.1, which takes none; 8,192 max tokens; reasoning
effort ``none`` for Direct and ``medium`` for CoT on GPT-5.1, ``medium`` on Gemini 3 Pro).

A setting is ``key=value``: ``temperature``, ``max_tokens`` and ``seed`` set the sampling field (``omit``: the
request carries no such key), any other key goes to the provider's extra body (JSON values allowed, e.g.
``reasoning_effort=medium`` or ``top_p=1``; ``omit`` drops a key set by an earlier layer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from zuhyo.errors import ZuhyoError
from zuhyo.models.base import GenerationConfig

OMIT = "omit"
"""The value that removes a parameter from the request."""
ALL_PROMPTS = "*"
"""Key of the overrides that apply to every prompt style."""
_FIELDS: dict[str, type] = {"temperature": float, "max_tokens": int, "seed": int}


class SettingError(ZuhyoError):
    """A generation setting that cannot be used (the message names it and where it came from)."""


@dataclass(frozen=True)
class Overrides:
    """Fields of a GenerationConfig to set (None: omit) and extra-body keys to merge (None: drop)."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def apply(self, gen: GenerationConfig) -> GenerationConfig:
        """``gen`` with these changes; extra-body keys merge into the existing ones (a None value drops one)."""
        extra = {**gen.extra_body, **self.extra_body}
        return replace(gen, **dict(self.fields), extra_body={k: v for k, v in extra.items() if v is not None})

    def then(self, later: Overrides) -> Overrides:
        """These overrides followed by ``later`` (later keys win)."""
        return Overrides({**self.fields, **later.fields}, {**self.extra_body, **later.extra_body})

    def to_json(self) -> dict[str, Any]:
        """As a run config table writes it (omitted values as ``"omit"``)."""
        out: dict[str, Any] = {k: OMIT if v is None else v for k, v in self.fields.items()}
        if self.extra_body:
            out["extra_body"] = {k: OMIT if v is None else v for k, v in self.extra_body.items()}
        return out

    def __bool__(self) -> bool:
        return bool(self.fields or self.extra_body)


def parse_value(raw: str) -> Any:
    """A command-line value: JSON when it parses (numbers, true, objects), else the string itself."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _field_value(key: str, value: Any, where: str) -> Any:
    if value == OMIT or value is None:
        return None
    kind = _FIELDS[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and int(value) != value):
        raise SettingError(f"{where}: {key}={value!r} is not {'an integer' if kind is int else 'a number'} "
                           f"(or {OMIT})")
    if key == "max_tokens" and value < 1:
        raise SettingError(f"{where}: max_tokens={value} must be at least 1")
    return kind(value)


def overrides_from_pairs(pairs: Mapping[str, Any], where: str, *, extra_only: bool = False) -> Overrides:
    """Overrides from ``key → value`` (sampling fields and extra-body keys mixed, as in ``--gen-for``);
    ``extra_only`` sends every key to the extra body (``--extra-body-for``)."""
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in pairs.items():
        if not key:
            raise SettingError(f"{where}: a setting has no key (expected key=value)")
        if key in _FIELDS and not extra_only:
            fields[key] = _field_value(key, value, where)
        else:
            extra[key] = None if value == OMIT else value
    return Overrides(fields, extra)


def overrides_from_table(table: Mapping[str, Any], where: str) -> Overrides:
    """Overrides from a TOML table: ``temperature``/``max_tokens``/``seed`` and an ``extra_body`` table."""
    extra = table.get("extra_body", {})
    if not isinstance(extra, Mapping):
        raise SettingError(f"{where}: extra_body must be a table of key = value")
    unknown = sorted(set(table) - set(_FIELDS) - {"extra_body"})
    if unknown:
        raise SettingError(f"{where}: unknown setting {unknown[0]!r} (expected temperature, max_tokens, seed or "
                           f"an extra_body table)")
    fields = overrides_from_pairs({k: v for k, v in table.items() if k in _FIELDS}, where)
    return fields.then(overrides_from_pairs(dict(extra), where, extra_only=True))


def prompt_tables(doc: Mapping[str, Any], where: str, styles: tuple[str, ...] | None = None) -> dict[str, Overrides]:
    """``[generation]`` (every prompt) and ``[prompts.<style>]`` tables of a run config or a model preset
    (``styles``: the prompt styles a table may name; None: any)."""
    out: dict[str, Overrides] = {}
    if "generation" in doc:
        out[ALL_PROMPTS] = overrides_from_table(_table(doc["generation"], f"{where} [generation]"),
                                                f"{where} [generation]")
    prompts = _table(doc.get("prompts", {}), f"{where} [prompts]")
    for style, table in prompts.items():
        if styles is not None and style not in styles:
            raise SettingError(f"{where}: [prompts.{style}] names no prompt style (choose from {', '.join(styles)})")
        out[style] = overrides_from_table(_table(table, f"{where} [prompts.{style}]"), f"{where} [prompts.{style}]")
    return out


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SettingError(f"{where} must be a table")
    return value
