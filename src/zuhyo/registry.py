"""Named registries: benchmarks, model backends, judges and metrics register here by name.

A registry maps a name to an entry and a one-line description. Entries are registered at import time of
light modules; anything heavy (torch, transformers, rapidocr) is imported inside the entry when it runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from zuhyo.errors import ZuhyoError

T = TypeVar("T")


class UnknownNameError(ZuhyoError, KeyError):
    """Raised for a name no entry is registered under; the message lists the known names."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered thing."""

    name: str
    value: T
    description: str


class Registry(Generic[T]):
    """A name → entry map with a decorator to fill it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, description: str) -> Callable[[T], T]:
        """Decorator: register the decorated object under ``name``."""

        def deco(value: T) -> T:
            self.add(name, value, description)
            return value

        return deco

    def add(self, name: str, value: T, description: str) -> None:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = Entry(name, value, description)

    def get(self, name: str) -> T:
        try:
            return self._entries[name].value
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(sorted(self._entries.values(), key=lambda e: e.name))

    def names(self) -> list[str]:
        return sorted(self._entries)


def import_modules(package: str, names: Iterable[str]) -> None:
    """Import ``<package>.<name>`` for each name so their registrations run (idempotent; modules stay light)."""
    for name in names:
        importlib.import_module(f"{package}.{name}")
