"""Metric registry: pure functions ``(sample, response) -> score in [0, 1] or None (not applicable)``."""

from __future__ import annotations

from collections.abc import Callable

from zuhyo.registry import Registry
from zuhyo.schema import Sample

MetricFn = Callable[[Sample, str], float | None]

METRICS: Registry[MetricFn] = Registry("metric")
