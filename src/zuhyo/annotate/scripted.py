"""Scripted people: take QA items through their protocol's real human checks, for rehearsals and tests.

Nothing is marked accepted by hand: each item goes through the workflow functions the web app calls: a domaincqa
item is rated Valid by two experts drawn by :func:`~zuhyo.annotate.review.assign_reviews`; a hakusho item is
answered blind by an independent annotator whose answer matches. A hakusho *draft* is first adopted by an author
(as an author does on ``/author`` with *Start from this draft*), because a draft alone never passes.

The scripted accounts have no password (:data:`zuhyo.annotate.users.NO_PASSWORD`): nobody can log in as them,
and their names (``<prefix>-author``, ``<prefix>-verifier``, ``<prefix>-expert-1``/``-2``) say what they are in
the audit log and the export's provenance. ``zuhyo demo build`` uses them; ``tests/gates_support.py`` too.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from sqlalchemy import select

from zuhyo.annotate.assign import next_verify_task, submit_verification
from zuhyo.annotate.review import assign_reviews, next_review_task, submit_review
from zuhyo.annotate.users import add_user
from zuhyo.annotate.workflow import MatchOutcome, WorkflowConfig, WorkflowError
from zuhyo.construct.qa.items import update_qa_item
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.qa_tables import QAItemRow, UserRow


def scripted_user(ws: Workspace, name: str, role: str, password: str | None = None) -> int:
    """The id of user ``name``, created with ``role`` (and no password unless given) when missing."""
    with ws.db.read() as s:
        uid = s.scalar(select(UserRow.id).where(UserRow.name == name))
    return uid if uid is not None else add_user(ws.db, name, password, [role], actor="scripted").id


def accept_by_script(ws: Workspace, item_ids: Iterable[int], *, prefix: str = "scripted",
                     password: str | None = None, seed: int = 0) -> list[int]:
    """Accept ``item_ids`` through their protocol's checks (module doc); the ids accepted, in order.

    :class:`WorkflowError` naming the item when one does not end accepted (the workflow refused a step).
    """
    config = WorkflowConfig.from_workspace(ws.config)
    author = scripted_user(ws, f"{prefix}-author", "annotator", password)
    verifier = scripted_user(ws, f"{prefix}-verifier", "annotator", password)
    experts = [scripted_user(ws, f"{prefix}-expert-{i}", "expert", password) for i in (1, 2)]
    rng = random.Random(seed)
    accepted: list[int] = []
    for item_id in item_ids:
        with ws.db.write() as s:
            item = s.get(QAItemRow, item_id)
            if item is None:
                raise WorkflowError(f"QA item {item_id} does not exist")
            protocol = config.gates.protocol_of(item.origin, item.style)
            if protocol == "hakusho":
                origin = "human" if item.origin == "draft" else item.origin
                update_qa_item(s, item, actor=f"{prefix}-author", action="adopt", origin=origin,
                               author_id=item.author_id or author, status="authored",
                               meta={**(item.meta or {}), "flow": "verify"})
            else:
                update_qa_item(s, item, actor=prefix, action="to_review", status="draft")
        if protocol == "hakusho":
            task = next_verify_task(ws.db, verifier, config)
            if task is None or task.qa_item_id != item_id:
                raise WorkflowError(f"QA item {item_id}: no blind verification task for it")
            result = submit_verification(ws.db, verifier, task.assignment_id, "the same answer", f"sv-{item_id}",
                                         matcher=lambda q, r, a: MatchOutcome("match", "scripted"), config=config)
        else:
            assign_reviews(ws.db, rng, config=config, qa_item_ids=[item_id])
            for n, expert in enumerate(experts):
                review = next_review_task(ws.db, expert, config=config)
                if review is None or review.qa_item_id != item_id:
                    raise WorkflowError(f"QA item {item_id}: no review task for expert {n + 1}")
                result = submit_review(ws.db, expert, review.assignment_id, "valid", f"sr-{item_id}-{n}",
                                       config=config)
        if result.item_status != "accepted":
            raise WorkflowError(f"QA item {item_id} ended {result.item_status}, not accepted")
        accepted.append(item_id)
    return accepted
