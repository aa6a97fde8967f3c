"""Per-prompt generation settings of a run and model presets, turned into an :class:`EvalConfig`.

HakushoBench §5.1 runs each model under settings that differ per model and prompt (temperature 0 except GPT-5.1,
which takes none; reasoning effort ``none`` for Direct and ``medium`` for CoT on GPT-5.1). They come from:

- a model preset (``--model preset:gpt-5.1``, :mod:`zuhyo.models.presets`);
- a run config (``--config run.toml``): a ``[generation]`` table for every prompt and ``[prompts.<style>]`` tables,
  each with ``temperature`` / ``max_tokens`` / ``seed`` (``"omit"`` leaves the key out of the request) and an
  ``extra_body`` table;
- ``--gen-for STYLE:key=value`` and ``--extra-body-for STYLE:key=value`` (``STYLE`` may be ``all``), which win
  over the run config.

The run's own settings win over a preset's. The effective settings per model and prompt are written to
``run.json`` (``generation_by_prompt``) and enter each request's fingerprint, so changing them re-runs only the
requests they change; a run without any of them keeps the fingerprints (and the stored answers) it had before.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from zuhyo.errors import ZuhyoError
from zuhyo.evaluate.config import EvalConfig
from zuhyo.evaluate.prompting import PROMPT_STYLES
from zuhyo.models.generation import (
    ALL_PROMPTS,
    Overrides,
    SettingError,
    overrides_from_pairs,
    parse_value,
    prompt_tables,
)
from zuhyo.models.presets import resolve_model

JUDGE_REPEATS = ("shared", "per-run")


def load_run_config(path: Path) -> dict[str, Overrides]:
    """The ``[generation]`` and ``[prompts.<style>]`` tables of a run config file."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SettingError(f"run config {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SettingError(f"run config {path}: not valid TOML ({e})") from None
    unknown = sorted(set(doc) - {"generation", "prompts"})
    if unknown:
        raise SettingError(f"run config {path}: unknown table {unknown[0]!r} (expected [generation] and "
                           f"[prompts.<style>])")
    return prompt_tables(doc, f"run config {path}", PROMPT_STYLES)


def parse_prompt_settings(values: list[str], option: str, *, extra_only: bool) -> dict[str, Overrides]:
    """``STYLE:key=value`` values of ``option`` (``--gen-for`` or ``--extra-body-for``) by prompt style."""
    pairs: dict[str, dict[str, object]] = {}
    for text in values:
        style, sep, kv = text.partition(":")
        key, eq, raw = kv.partition("=")
        if not sep or not eq or not key:
            raise SettingError(f"{option} {text!r}: expected STYLE:key=value, e.g. cot:reasoning_effort=medium")
        style = ALL_PROMPTS if style == "all" else style
        if style != ALL_PROMPTS and style not in PROMPT_STYLES:
            raise SettingError(f"{option} {text!r}: {style!r} is no prompt style (choose from all, "
                               f"{', '.join(PROMPT_STYLES)})")
        pairs.setdefault(style, {})[key] = parse_value(raw)
    return {style: overrides_from_pairs(kv, f"{option} {style}", extra_only=extra_only) for style, kv in pairs.items()}


def combine(*layers: Mapping[str, Overrides]) -> dict[str, Overrides]:
    """Per-style overrides of several sources, later sources winning key by key."""
    out: dict[str, Overrides] = {}
    for layer in layers:
        for style, o in layer.items():
            out[style] = out[style].then(o) if style in out else o
    return out


def expand_presets(config: EvalConfig, environ: Mapping[str, str]) -> EvalConfig:
    """``config`` with each ``preset:`` model replaced by its spec, its settings and its API key (a
    :class:`~zuhyo.models.presets.PresetError` for an unknown preset or an unset key variable)."""
    if not any(m.startswith("preset:") for m in config.models):
        return config
    models: list[str] = []
    settings = dict(config.model_settings)
    keys = dict(config.model_api_keys)
    for spec in config.models:
        resolved = resolve_model(spec, environ)
        if resolved.spec in models:
            raise ZuhyoError(f"--model {spec} names {resolved.spec} twice")
        models.append(resolved.spec)
        if resolved.settings:
            settings[resolved.spec] = resolved.settings
        if resolved.api_key:
            keys[resolved.spec] = resolved.api_key
    return replace(config, models=tuple(models), model_settings=settings, model_api_keys=keys)


def check_judge_repeat(mode: str) -> str:
    if mode not in JUDGE_REPEATS:
        raise ZuhyoError(f"unknown --judge-repeat {mode!r}; choose from {', '.join(JUDGE_REPEATS)}")
    return mode
