"""Reports over run sets: aggregation, statistics, paper-shaped tables (Markdown/CSV/LaTeX), plots and HTML.

Entry point: :func:`zuhyo.report.build.build_report` (what `zuhyo report` calls). Submodules import numpy, scipy,
matplotlib and jinja2 lazily or at their own import; this package's ``__init__`` imports nothing heavy.
"""

from __future__ import annotations
