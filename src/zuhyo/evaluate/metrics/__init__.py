"""Metrics (pure functions, registered by name)."""

from __future__ import annotations

from zuhyo.evaluate.metrics.base import METRICS, MetricFn
from zuhyo.registry import import_modules

_METRIC_MODULES = ("relaxed", "chartqapro", "astro", "text_overlap")


def ensure_registered() -> None:
    """Import the modules that register themselves (idempotent)."""
    import_modules(__name__, _METRIC_MODULES)


__all__ = ["METRICS", "MetricFn", "ensure_registered"]
