"""Model presets: the models of the two papers as data files (``presets/*.toml``), used as
``--model preset:<name>[@<base_url>]``.

Each file states the endpoint kind (``openai``: OpenAI's API; ``gemini``: Gemini's OpenAI-compatible endpoint;
``vllm``: a local vLLM server, with the command that serves it), the model id, the API-key variable (empty: none
needed) and the generation settings per prompt style as the paper states them (``[generation]`` for every prompt,
``[prompts.<style>]`` per style; HakushoBench §5.1 for its nine models, DomainCQA Table 2 / Table 5 for the
others, which state no sampling settings). A preset expands to an ``openai:<model>@<base_url>`` spec, so its
predictions are the same records as the spelled-out spec's.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from zuhyo.errors import ZuhyoError
from zuhyo.models.base import BackendOptions, ChatRequest, ModelBackend, ModelReply, build_backend
from zuhyo.models.generation import ALL_PROMPTS, Overrides, SettingError, prompt_tables

PREFIX = "preset:"
ENDPOINT_KINDS = ("openai", "gemini", "vllm")


class PresetError(ZuhyoError):
    """An unknown preset, a malformed preset file, or a preset whose API-key variable is not set."""


@dataclass(frozen=True)
class ModelPreset:
    """One preset file, read."""

    name: str
    title: str
    endpoint: str
    """openai | gemini | vllm."""
    model: str
    """The model id the endpoint serves."""
    base_url: str
    api_key_env: str
    """Variable holding the API key ("" for a local server that needs none)."""
    settings: dict[str, Overrides] = field(default_factory=dict)
    """Generation overrides: ``*`` for every prompt style, else per style."""
    papers: tuple[str, ...] = ()
    reference_names: tuple[str, ...] = ()
    """How the papers' tables name the model (matched by ``zuhyo report --reference-scores``)."""
    serve: str = ""
    """The command that serves an open model on vLLM."""
    note: str = ""

    def spec(self, base_url: str | None = None) -> str:
        """The ``openai:<model>@<base_url>`` spec this preset stands for."""
        return f"openai:{self.model}@{(base_url or self.base_url).rstrip('/')}"

    def describe(self) -> str:
        """One line for ``zuhyo list``."""
        sets = "; ".join(f"{'all prompts' if k == '*' else k}: {_brief(v)}" for k, v in self.settings.items())
        key = f"key ${self.api_key_env}" if self.api_key_env else "no key"
        return (f"{self.title} — {self.endpoint}, {self.model}, {key}"
                + (f"; {sets}" if sets else "") + f" ({', '.join(self.papers)})")


@dataclass(frozen=True)
class ResolvedModel:
    """A ``--model`` value after preset expansion."""

    spec: str
    api_key: str | None = None
    """The preset's key (None: use the run's ``--api-key-env`` key, or none)."""
    settings: dict[str, Overrides] = field(default_factory=dict)
    preset: str | None = None


def _brief(o: Overrides) -> str:
    return ", ".join(f"{k}={v}" for k, v in {**o.to_json(), **o.to_json().get("extra_body", {})}.items()
                     if k != "extra_body")


def _parse(doc: Mapping[str, Any], where: str) -> ModelPreset:
    try:
        name, model, endpoint = str(doc["name"]), str(doc["model"]), str(doc["endpoint"])
        base_url = str(doc["base_url"])
    except KeyError as e:
        raise PresetError(f"{where}: missing key {e.args[0]!r}") from None
    if endpoint not in ENDPOINT_KINDS:
        raise PresetError(f"{where}: endpoint {endpoint!r} is not one of {', '.join(ENDPOINT_KINDS)}")
    try:
        settings = prompt_tables(doc, where)
    except SettingError as e:
        raise PresetError(str(e)) from None
    return ModelPreset(name=name, title=str(doc.get("title", name)), endpoint=endpoint, model=model,
                       base_url=base_url, api_key_env=str(doc.get("api_key_env", "")), settings=settings,
                       papers=tuple(doc.get("papers", ())), reference_names=tuple(doc.get("reference_names", ())),
                       serve=str(doc.get("serve", "")), note=str(doc.get("note", "")))


def load_presets() -> dict[str, ModelPreset]:
    """Every bundled preset by name (read from the package data on each call; a few small files)."""
    out: dict[str, ModelPreset] = {}
    for entry in sorted(resources.files("zuhyo.models").joinpath("presets").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            preset = _parse(tomllib.loads(entry.read_text(encoding="utf-8")), f"preset file {entry.name}")
            out[preset.name] = preset
    return out


def get_preset(name: str) -> ModelPreset:
    """The preset ``name``; a :class:`PresetError` naming the known ones otherwise."""
    presets = load_presets()
    if name not in presets:
        raise PresetError(f"unknown model preset {name!r}; known presets: {', '.join(presets)}")
    return presets[name]


def resolve_model(spec: str, environ: Mapping[str, str]) -> ResolvedModel:
    """``preset:<name>[@<base_url>]`` → its spec, key (from the preset's variable) and settings; any other spec
    unchanged. A preset whose API-key variable is unset or empty is a :class:`PresetError`."""
    if not spec.startswith(PREFIX):
        return ResolvedModel(spec)
    name, _, base_url = spec[len(PREFIX):].partition("@")
    preset = get_preset(name)
    if base_url and not base_url.startswith(("http://", "https://")):
        raise PresetError(f"--model {spec}: base URL {base_url!r} is not http(s)")
    key = None
    if preset.api_key_env:
        key = environ.get(preset.api_key_env) or None
        if key is None:
            raise PresetError(f"model preset {name!r} needs its API key in ${preset.api_key_env}, which is not set")
    return ResolvedModel(preset.spec(base_url or None), key, dict(preset.settings), name)


class PresetBackend:
    """A preset's backend for requests that have no prompt style (judges, labelling): the preset's settings for
    every prompt (``[generation]``) are applied to each request, so e.g. ``llm:preset:gpt-5.1`` sends no
    temperature. Its spec is the ``preset:`` spec (so judge ids name the preset and its settings)."""

    is_baseline = False

    def __init__(self, spec: str, inner: ModelBackend, overrides: Overrides) -> None:
        self.spec = spec
        self.inner = inner
        self.overrides = overrides
        self.max_image_pixels = inner.max_image_pixels

    async def generate(self, request: ChatRequest) -> ModelReply:
        return await self.inner.generate(replace(request, config=self.overrides.apply(request.config)))

    async def aclose(self) -> None:
        await self.inner.aclose()


def preset_backend(spec: str, environ: Mapping[str, str], options: BackendOptions) -> PresetBackend:
    """The backend of ``preset:<name>[@<base_url>]`` with the preset's key and all-prompt settings."""
    resolved = resolve_model(spec, environ)
    inner = build_backend(resolved.spec, replace(options, api_key=resolved.api_key or options.api_key))
    return PresetBackend(spec, inner, resolved.settings.get(ALL_PROMPTS, Overrides()))
