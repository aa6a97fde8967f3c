"""Benchmark adapters. Importing :func:`ensure_registered` registers every built-in adapter (all light modules)."""

from __future__ import annotations

from zuhyo.benchmarks.base import BENCHMARKS, BenchmarkSource, LoadResult, load_benchmark

_ADAPTER_MODULES = ("local", "bundled", "chartqa", "chartqapro", "charxiv", "hakusho", "astrochart")


def ensure_registered() -> None:
    """Import the adapter modules so they register themselves (idempotent)."""
    import importlib

    for mod in _ADAPTER_MODULES:
        try:
            importlib.import_module(f"zuhyo.benchmarks.{mod}")
        except ModuleNotFoundError as e:
            if e.name != f"zuhyo.benchmarks.{mod}":
                raise


__all__ = ["BENCHMARKS", "BenchmarkSource", "LoadResult", "ensure_registered", "load_benchmark"]
