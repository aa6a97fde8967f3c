"""Take QA items through their protocol's real human checks, for tests that need accepted items to export: the
scripted people of :mod:`zuhyo.annotate.scripted` (two experts' Valid for a domaincqa item; an author and a
matching blind answer for a hakusho one), with passwords, as real accounts have."""

from __future__ import annotations

from collections.abc import Iterable

from zuhyo.annotate.scripted import accept_by_script
from zuhyo.construct.workspace import Workspace

PASSWORD = "gates-support-password"


def pass_gates(ws: Workspace, item_ids: Iterable[int]) -> None:
    """Accept ``item_ids`` through their protocol's checks (see the module doc)."""
    accept_by_script(ws, item_ids, prefix="gate", password=PASSWORD)
