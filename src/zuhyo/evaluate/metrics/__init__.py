"""Metrics (pure functions, registered by name)."""

from __future__ import annotations

from zuhyo.evaluate.metrics.base import METRICS, MetricFn

_METRIC_MODULES = ("relaxed", "chartqapro", "astro", "text_overlap")


def ensure_registered() -> None:
    import importlib

    for mod in _METRIC_MODULES:
        try:
            importlib.import_module(f"zuhyo.evaluate.metrics.{mod}")
        except ModuleNotFoundError as e:
            if e.name != f"zuhyo.evaluate.metrics.{mod}":
                raise


__all__ = ["METRICS", "MetricFn", "ensure_registered"]
