"""The annotation app's one message catalogue (``messages.toml``): every key in Japanese and English.

Japanese is the default language (HakushoBench's annotators are Japanese); each user picks a language, stored in
``users.locale``. The catalogue is a TOML file of tables whose leaves are ``{ja = "…", en = "…"}``; a key is the
dotted path to a leaf, e.g. ``nav.home``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

#: The languages every message has, the first being the default.
LOCALES = ("ja", "en")
DEFAULT_LOCALE = LOCALES[0]


def _flatten(table: dict[str, Any], prefix: str, out: dict[str, dict[str, str]]) -> None:
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else key
        if not isinstance(value, dict):
            raise ValueError(f"messages.toml: {path} is not a table of languages")
        if any(isinstance(v, str) for v in value.values()):
            out[path] = {k: v for k, v in value.items() if isinstance(v, str)}
        else:
            _flatten(value, path, out)


def load_catalogue(text: str | None = None) -> dict[str, dict[str, str]]:
    """``{key: {locale: message}}`` from the bundled catalogue (or ``text``)."""
    if text is None:
        text = resources.files("zuhyo.annotate").joinpath("messages.toml").read_text(encoding="utf-8")
    out: dict[str, dict[str, str]] = {}
    _flatten(tomllib.loads(text), "", out)
    return out


def missing_translations(catalogue: dict[str, dict[str, str]]) -> list[str]:
    """``key (locale)`` for every message lacking a language of :data:`LOCALES`."""
    return [f"{key} ({loc})" for key, langs in sorted(catalogue.items()) for loc in LOCALES if not langs.get(loc)]


def normalise_locale(value: str | None) -> str:
    """``value`` when it is a supported language, else the default (Japanese)."""
    return value if value in LOCALES else DEFAULT_LOCALE


@dataclass(frozen=True)
class Translator:
    """Messages in one language; ``t("nav.home")``, with ``str.format`` fields filled from keywords."""

    catalogue: dict[str, dict[str, str]]
    locale: str

    def __call__(self, key: str, **fields: Any) -> str:
        langs = self.catalogue.get(key)
        if langs is None:
            raise KeyError(f"message {key!r} is not in messages.toml")
        text = langs.get(self.locale) or langs[DEFAULT_LOCALE]
        return text.format(**fields) if fields else text

    def has(self, key: str) -> bool:
        return key in self.catalogue
