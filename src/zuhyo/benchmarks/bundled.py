"""Bundled sample benchmarks shipped inside the package (rendered by ``scripts/render_samples.py``)."""

from __future__ import annotations

from pathlib import Path

from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, benchmark
from zuhyo.benchmarks.local import load_local

DATA_DIR = Path(__file__).parent / "data"


def _bundled(name: str) -> BenchmarkSource:
    return BenchmarkSource(path=DATA_DIR / name / "samples.jsonl")


def _load_as(name: str, source: BenchmarkSource, strict: bool) -> LoadResult:
    result = load_local(source, strict)
    result.benchmark = name
    return result


@benchmark("sample-ja",
           "Bundled: Japanese white-paper-style charts/tables from real public statistics, one hard QA each",
           default_source=lambda: _bundled("sample-ja"))
def load_sample_ja(source: BenchmarkSource, strict: bool) -> LoadResult:
    return _load_as("sample-ja", source, strict)


@benchmark("sample-astro", "Bundled: astronomy-style charts with FQA/AQA items in every DomainCQA category",
           default_source=lambda: _bundled("sample-astro"))
def load_sample_astro(source: BenchmarkSource, strict: bool) -> LoadResult:
    return _load_as("sample-astro", source, strict)
