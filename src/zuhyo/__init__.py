"""zuhyo (図表): build and evaluate chart & table VQA benchmarks.

The public API is a thin layer over private modules; import what you need from here.
"""

from __future__ import annotations

__version__ = "0.1.0"

from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, load_benchmark
from zuhyo.schema import Flag, ImageRef, ImageType, RowError, Sample

__all__ = ["BenchmarkSource", "Flag", "ImageRef", "ImageType", "LoadResult", "RowError", "Sample",
           "__version__", "load_benchmark"]
