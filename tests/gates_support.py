"""Take QA items through their protocol's real human checks, for tests that need accepted items to export.

Nothing is marked accepted by hand: each item goes through the workflow functions the web app calls
(:mod:`zuhyo.annotate`): a domaincqa item is rated Valid by two experts drawn by :func:`assign_reviews`; a hakusho
item is answered blind by an independent annotator whose answer matches. A hakusho *draft* is first adopted by an
author (as an author does on ``/author`` with *Start from this draft*), because a draft alone never passes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from sqlalchemy import select

from zuhyo.annotate.assign import next_verify_task, submit_verification
from zuhyo.annotate.review import assign_reviews, next_review_task, submit_review
from zuhyo.annotate.users import add_user
from zuhyo.annotate.workflow import MatchOutcome, WorkflowConfig
from zuhyo.construct.qa.items import update_qa_item
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.qa_tables import QAItemRow, UserRow

PASSWORD = "gates-support-password"


def _user(ws: Workspace, name: str, role: str) -> int:
    with ws.db.read() as s:
        uid = s.scalar(select(UserRow.id).where(UserRow.name == name))
    return uid if uid is not None else add_user(ws.db, name, PASSWORD, [role]).id


def pass_gates(ws: Workspace, item_ids: Iterable[int]) -> None:
    """Accept ``item_ids`` through their protocol's checks (see the module doc)."""
    config = WorkflowConfig.from_workspace(ws.config)
    author = _user(ws, "gate-author", "annotator")
    verifier = _user(ws, "gate-verifier", "annotator")
    experts = [_user(ws, f"gate-expert-{i}", "expert") for i in (1, 2)]
    rng = random.Random(0)
    for item_id in item_ids:
        with ws.db.write() as s:
            item = s.get(QAItemRow, item_id)
            assert item is not None, item_id
            protocol = config.gates.protocol_of(item.origin, item.style)
            if protocol == "hakusho":
                origin = "human" if item.origin == "draft" else item.origin
                update_qa_item(s, item, actor="gate-author", action="adopt", origin=origin,
                               author_id=item.author_id or author, status="authored",
                               meta={**(item.meta or {}), "flow": "verify"})
            else:
                update_qa_item(s, item, actor="gates", action="to_review", status="draft")
        if protocol == "hakusho":
            task = next_verify_task(ws.db, verifier, config)
            assert task is not None and task.qa_item_id == item_id, (task, item_id)
            result = submit_verification(ws.db, verifier, task.assignment_id, "the same answer", f"gv-{item_id}",
                                         matcher=lambda q, r, a: MatchOutcome("match", "test"), config=config)
        else:
            assign_reviews(ws.db, rng, config=config, qa_item_ids=[item_id])
            for n, expert in enumerate(experts):
                review = next_review_task(ws.db, expert, config=config)
                assert review is not None and review.qa_item_id == item_id, (review, item_id)
                result = submit_review(ws.db, expert, review.assignment_id, "valid", f"gr-{item_id}-{n}",
                                       config=config)
        assert result.item_status == "accepted", (item_id, result)
