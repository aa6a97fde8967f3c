"""Benchmark adapters. Importing :func:`ensure_registered` registers every built-in adapter (all light modules)."""

from __future__ import annotations

from zuhyo.benchmarks.base import BENCHMARKS, BenchmarkSource, LoadResult, load_benchmark
from zuhyo.registry import import_modules

_ADAPTER_MODULES = ("local", "bundled", "chartqa", "chartqapro", "charxiv", "hakusho", "astrochart")


def ensure_registered() -> None:
    """Import the adapter modules so they register themselves (idempotent)."""
    import_modules(__name__, _ADAPTER_MODULES)


__all__ = ["BENCHMARKS", "BenchmarkSource", "LoadResult", "ensure_registered", "load_benchmark"]
