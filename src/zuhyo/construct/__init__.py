"""The construction pipeline (HakushoBench §3.1-3.3, DomainCQA §4.1-4.3), one folder per stage group in order:

1. :mod:`~zuhyo.construct.workspace` — the workspace (``zuhyo.toml``, SQLite or PostgreSQL, image store), its
   tables, migrations, records and queries: what every stage reads and writes;
2. :mod:`~zuhyo.construct.collect` — figures with captions and provenance from HTML editions, LaTeX, PDF, folders;
3. :mod:`~zuhyo.construct.filter` — bad files, low resolution, near duplicates, chart vs not;
4. :mod:`~zuhyo.construct.select` — image types, complexity vectors (CCV), Gibbs sampling;
5. :mod:`~zuhyo.construct.qa` — chart abstracts by vote, drafted QA per category, the model audit, QA items;
6. :mod:`~zuhyo.construct.publish` — the HF dataset export, its card and the Hub push.

Beside them: :mod:`~zuhyo.construct.executor` (local processes or Ray for the stages that map over images) and
:mod:`~zuhyo.construct.asking` (model calls with the evaluation runner's retries). A stage imports the workspace,
the shared modules and earlier stages, never a later one (``docs/architecture.md``).

The stages' entry points are importable from here (``from zuhyo.construct import run_filter``); each is loaded
on first use, so importing this package costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public entry point → the module that defines it, in pipeline order.
_ENTRY_POINTS = {
    "Workspace": "workspace",
    "status": "workspace.queries",
    "list_figures": "workspace.queries",
    "decide": "workspace.queries",
    "collect_html": "collect.html",
    "collect_latex": "collect.latex",
    "collect_pdfs": "collect.pdf",
    "collect_folder": "collect.folder",
    "run_filter": "filter.stage",
    "train_chart_classifier": "filter.chart_classifier",
    "train_resnet_classifier": "filter.chart_classifier",
    "run_labelling": "select.labelling",
    "import_labels": "select.labelling",
    "IMAGE_TYPE_TASK": "select.classify",
    "CCV_TASK": "select.complexity",
    "sample_workspace": "select.sample_stage",
    "gibbs_sample": "select.sampling",
    "run_abstracts": "qa.abstracts",
    "run_drafting": "qa.drafting",
    "run_audit": "qa.audit",
    "add_qa_item": "qa.items",
    "update_qa_item": "qa.items",
    "export_workspace": "publish.export",
    "ExportOptions": "publish.export",
    "push_to_hub": "publish.hub",
    "map_items": "executor",
}

__all__ = list(_ENTRY_POINTS)


def __getattr__(name: str) -> Any:
    module = _ENTRY_POINTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_ENTRY_POINTS])
