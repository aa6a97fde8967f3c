"""Authoring, blind verification and revision (HakushoBench §3.2–3.3) as database transactions.

Each function is one write transaction. Handing out work is atomic: an assignment row is live (open or
submitted) for at most one person per (step, target, round, slot) — a partial unique index — and on PostgreSQL
every workflow transaction runs under one advisory lock, as SQLite's ``BEGIN IMMEDIATE`` serialises them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from zuhyo.annotate.assign_base import (
    acknowledge,
    aware,
    claim,
    current_open,
    expire_stale,
    figure_view,
    new_assignment,
    non_empty,
    open_flags,
    own_open_assignment,
    qa_item,
    record_shown,
    replay,
    set_assignment,
    transact,
)
from zuhyo.annotate.grading import Grading, grading_changes
from zuhyo.annotate.users import require
from zuhyo.annotate.workflow import (
    AuthorTask,
    Conflict,
    DraftView,
    Matcher,
    NotAllowed,
    NotFound,
    ReviewView,
    RevisionTask,
    SubmitResult,
    VerificationView,
    VerifyTask,
    WorkflowConfig,
    WorkflowError,
)
from zuhyo.construct.qa.gates import gather_evidence, may_verify, passing_verifications
from zuhyo.construct.qa.items import add_qa_item, grading_view, log_action, update_qa_item
from zuhyo.construct.workspace.db import Database
from zuhyo.construct.workspace.orm import utcnow
from zuhyo.construct.workspace.qa_tables import AssignmentRow, QAFlag, QAItemRow, ReviewRow, UserRow, VerificationRow
from zuhyo.construct.workspace.tables import Document, FigureRow
from zuhyo.schema import Flag

DEFAULT_CONFIG = WorkflowConfig()
#: Item states in which a QA item counts towards a figure's authors (not discarded or rejected).
_LIVE_ITEM = ("authored", "verifying", "adjudicating", "revise", "reviewing", "accepted")


def _pool(s: Session) -> list[tuple[int, int]]:
    """(figure id, source id) of the figures open for authoring: the current sample, else every figure not
    dropped by a stage."""
    from zuhyo.construct.select.sample_stage import DECIDED_BY, SAMPLE_STAGE
    from zuhyo.construct.workspace.queries import dropped_figure_ids
    from zuhyo.construct.workspace.tables import DecisionRow

    base = select(FigureRow.id, Document.source_id).join(Document, Document.id == FigureRow.document_id)
    latest = s.scalar(select(func.max(DecisionRow.id)).where(DecisionRow.stage == SAMPLE_STAGE,
                                                            DecisionRow.decided_by == DECIDED_BY))
    if latest is not None:
        run_id = s.scalar(select(DecisionRow.run_id).where(DecisionRow.id == latest))
        keep = select(DecisionRow.figure_id).where(DecisionRow.stage == SAMPLE_STAGE,
                                                   DecisionRow.decided_by == DECIDED_BY,
                                                   DecisionRow.run_id == run_id, DecisionRow.decision == "keep")
        return [(f, src) for f, src in s.execute(base.where(FigureRow.id.in_(keep)))]
    dropped = dropped_figure_ids(s)
    return [(f, src) for f, src in s.execute(base) if f not in dropped]


def _author_task(s: Session, row: AssignmentRow) -> AuthorTask:
    assert row.figure_id is not None
    items = list(s.scalars(select(QAItemRow).where(QAItemRow.figure_id == row.figure_id).order_by(QAItemRow.id)))
    drafts = [DraftView(qa_item_id=i.id, question=i.question, answer=i.answer, category=i.category,
                        aspect=i.aspect, status=i.status) for i in items
              if i.origin == "draft" and i.status not in ("rejected", "discarded")]
    return AuthorTask(assignment_id=row.id, figure=figure_view(s, row.figure_id), expires_at=aware(row.expires_at),
                      difficulty_choices=tuple(f.value for f in Flag), drafts=drafts,
                      flags=open_flags(s, [i.id for i in items]))


def next_author_task(db: Database, user_id: int, config: WorkflowConfig = DEFAULT_CONFIG, *,
                     hand_out: bool = True) -> AuthorTask | None:
    """The annotator's open authoring assignment, else (when ``hand_out``) a new one, else None (nothing left).

    A new figure is chosen balanced across sources (HakushoBench §3.2 draws from 33 white papers): the source
    with the fewest authored items (held assignments included) first, then the figure with the fewest, then the
    lowest id, among the current sample (all figures not dropped when there is no sample); never a figure the
    user authored or skipped, nor one another author holds open (one author at a time), nor one that already has
    ``config.authors_per_figure`` live human items. Stale assignments are released first.
    """

    def work(s: Session) -> AuthorTask | None:
        user = require(s, user_id, "annotator")
        now = utcnow()
        expire_stale(s, now)
        held = current_open(s, user.id, "author")
        if held is not None or not hand_out:
            return _author_task(s, held) if held is not None else None
        pool = _pool(s)
        if not pool:
            return None
        authored = Counter(fid for fid, in s.execute(
            select(QAItemRow.figure_id).where(QAItemRow.origin == "human", QAItemRow.status.in_(_LIVE_ITEM))))
        held_by_others = Counter(fid for fid, in s.execute(
            select(AssignmentRow.figure_id).where(AssignmentRow.step == "author", AssignmentRow.status == "open")))
        mine = {fid for fid, in s.execute(select(AssignmentRow.figure_id).where(
            AssignmentRow.step == "author", AssignmentRow.user_id == user.id,
            AssignmentRow.status.in_(("submitted", "skipped"))))}
        mine |= {fid for fid, in s.execute(select(QAItemRow.figure_id).where(QAItemRow.author_id == user.id))}
        per_source: Counter[int] = Counter()
        for fid, src in pool:
            per_source[src] += authored[fid] + held_by_others[fid]
        candidates = [(per_source[src], authored[fid], fid, src) for fid, src in pool
                      if fid not in mine and not held_by_others[fid]
                      and authored[fid] < config.authors_per_figure]
        if not candidates:
            return None
        _, _, fid, _ = min(candidates)
        round_ = (s.scalar(select(func.max(AssignmentRow.round)).where(
            AssignmentRow.step == "author", AssignmentRow.target_key == f"figure/{fid}")) or 0) + 1
        row = new_assignment(s, step="author", target_key=f"figure/{fid}", user=user, now=now,
                             ttl_s=config.assignment_ttl.total_seconds(), round_=round_, figure_id=fid)
        return _author_task(s, row)

    return transact(db, work)


def _difficulty(flags: list[str]) -> list[str]:
    out: list[str] = []
    for value in flags:
        try:
            flag = Flag(value).value
        except ValueError:
            raise WorkflowError(f"unknown difficulty flag {value!r} (one of {', '.join(f.value for f in Flag)})") \
                from None
        if flag not in out:
            out.append(flag)
    if not out:
        raise WorkflowError("choose at least one difficulty flag (HakushoBench §3.2)")
    return out


def check_requirements(question: str, answer: str) -> None:
    """HakushoBench §3.2 for people, with the checks drafts get (:mod:`zuhyo.construct.qa.draft_checks`): no
    yes/no or multiple-choice form, and an answer the question does not give away."""
    from zuhyo.construct.qa.draft_checks import choice_reason, leak_reason, yes_no_reason

    reason = yes_no_reason(question, answer) or choice_reason(question) or leak_reason(question, answer)
    if reason:
        raise WorkflowError(f"the question does not meet HakushoBench §3.2: {reason}; ask for a value, a name or a "
                            "short phrase that needs the image")


def submit_authored(db: Database, user_id: int, assignment_id: int, question: str, answer: str,
                    difficulty: list[str], submit_key: str, *, from_draft_id: int | None = None,
                    style: str = "hakusho", config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Store the author's QA item; one per figure per author (item key ``author/<figure>/<user>``), the
    submitting person its author even when it started from a model draft. ``difficulty``: one or more
    HakushoBench flags. Under the hakusho protocol the item meets §3.2 (:func:`check_requirements`) and waits for
    blind verification (``authored``); under domaincqa it waits for expert review (``draft``)."""
    question = non_empty(question, "question")
    answer = non_empty(answer, "answer")
    flags = _difficulty(difficulty)
    protocol = config.gates.protocol_of("human", style)
    if protocol == "hakusho":
        check_requirements(question, answer)

    def work(s: Session) -> SubmitResult:
        claimed = claim(s, user_id, submit_key, assignment_id, "author", "annotator")
        if isinstance(claimed, SubmitResult):
            return claimed
        user, row = claimed
        assert row.figure_id is not None
        meta: dict[str, Any] = ({"flow": "verify", "verify_round": 1} if protocol == "hakusho"
                                else {"flow": "review"})
        meta["assignment_id"] = row.id
        if from_draft_id is not None:
            meta["from_draft"] = from_draft_id
        status = "authored" if protocol == "hakusho" else "draft"
        item, created = add_qa_item(s, item_key=f"author/{row.figure_id}/{user.id}", figure_id=row.figure_id,
                                    origin="human", question=question, answer=answer, status=status,
                                    actor=user.name, user_id=user.id, style=style, difficulty=flags,
                                    author_id=user.id, meta=meta)
        if not created:
            raise Conflict(f"figure {row.figure_id}: user {user.name!r} already wrote QA item {item.id} for it")
        set_assignment(s, row, "submitted", actor=user.name, user_id=user.id)
        return acknowledge(s, user, SubmitResult(key=submit_key, step="author", outcome="authored",
                                                 assignment_id=row.id, qa_item_id=item.id, item_status=item.status))

    return transact(db, work)


def _back_to_queue(s: Session, row: AssignmentRow, user: UserRow) -> None:
    if row.step == "verify" and row.qa_item_id is not None:
        item = qa_item(s, row.qa_item_id)
        if item.status == "verifying":
            update_qa_item(s, item, actor=user.name, user_id=user.id, action="verify_returned", status="authored")


def skip_task(db: Database, user_id: int, assignment_id: int, reason: str, submit_key: str) -> SubmitResult:
    """Skip an assignment of any step with a reason (HakushoBench §3.2: images without a good question are
    skipped); the user is not offered the same target again."""
    reason = non_empty(reason, "skip reason")

    def work(s: Session) -> SubmitResult:
        claimed = claim(s, user_id, submit_key, assignment_id, None)
        if isinstance(claimed, SubmitResult):
            return claimed
        user, row = claimed
        set_assignment(s, row, "skipped", actor=user.name, user_id=user.id, reason=reason)
        _back_to_queue(s, row, user)
        return acknowledge(s, user, SubmitResult(key=submit_key, step=row.step, outcome="skipped",
                                                 assignment_id=row.id, qa_item_id=row.qa_item_id))

    return transact(db, work)


def release_task(db: Database, user_id: int, assignment_id: int) -> SubmitResult:
    """Give an open assignment back unanswered (it goes to someone else, this user may get it again); not a
    skip."""

    def work(s: Session) -> SubmitResult:
        user = require(s, user_id)
        row = own_open_assignment(s, user, assignment_id)
        set_assignment(s, row, "released", actor=user.name, user_id=user.id, reason="given back")
        _back_to_queue(s, row, user)
        return SubmitResult(key="", step=row.step, outcome="released", assignment_id=row.id,
                            qa_item_id=row.qa_item_id)

    return transact(db, work)


def _verify_task(s: Session, row: AssignmentRow) -> VerifyTask:
    assert row.qa_item_id is not None
    item = qa_item(s, row.qa_item_id)
    return VerifyTask(assignment_id=row.id, qa_item_id=item.id, round=row.round,
                      figure=figure_view(s, item.figure_id, blind=True), question=item.question,
                      expires_at=aware(row.expires_at))


def _next_to_verify(s: Session, user_id: int, batch: int = 64) -> QAItemRow | None:
    """The oldest item waiting for verification that ``user_id`` is independent of
    (:func:`zuhyo.construct.qa.gates.may_verify`) and has not skipped; candidates are read in batches and their
    evidence in one query per table (the actions index is by target), so the check stays cheap under load."""
    skipped = select(AssignmentRow.qa_item_id).where(AssignmentRow.step == "verify", AssignmentRow.user_id == user_id,
                                                     AssignmentRow.status == "skipped")
    last = 0
    while True:
        items = list(s.scalars(select(QAItemRow).where(
            QAItemRow.status == "authored", QAItemRow.author_id.is_not(None), QAItemRow.author_id != user_id,
            QAItemRow.id > last, QAItemRow.id.not_in(skipped)).order_by(QAItemRow.id).limit(batch)))
        if not items:
            return None
        evidence = gather_evidence(s, [i.id for i in items])
        for item in items:
            if may_verify(user_id, item, evidence[item.id]):
                return item
        last = items[-1].id


def next_verify_task(db: Database, user_id: int, config: WorkflowConfig = DEFAULT_CONFIG, *,
                     hand_out: bool = True) -> VerifyTask | None:
    """The annotator's open verification, else (when ``hand_out``) a new blind one (HakushoBench §3.3) on the
    oldest item waiting for verification that this user is independent of
    (:func:`zuhyo.construct.qa.gates.may_verify`: never authored, revised, shown the reference of, answered or
    rated it) and has not skipped — so a revised item goes to yet another user — else None."""

    def work(s: Session) -> VerifyTask | None:
        user = require(s, user_id, "annotator")
        now = utcnow()
        expire_stale(s, now)
        held = current_open(s, user.id, "verify")
        if held is not None or not hand_out:
            return _verify_task(s, held) if held is not None else None
        item = _next_to_verify(s, user.id)
        if item is None:
            return None
        round_ = int((item.meta or {}).get("verify_round", 1))
        slot = s.scalar(select(func.count(AssignmentRow.id)).where(
            AssignmentRow.step == "verify", AssignmentRow.target_key == f"qa/{item.id}", AssignmentRow.round == round_,
            AssignmentRow.status == "submitted")) or 0  # several verifiers per item: one slot each
        row = new_assignment(s, step="verify", target_key=f"qa/{item.id}", user=user, now=now,
                             ttl_s=config.assignment_ttl.total_seconds(), round_=round_, slot=slot,
                             figure_id=item.figure_id,
                             qa_item_id=item.id, meta={"item_revision": item.revision})
        update_qa_item(s, item, actor=user.name, user_id=user.id, action="verify_assigned", status="verifying")
        return _verify_task(s, row)

    return transact(db, work)


def submit_verification(db: Database, user_id: int, assignment_id: int, answer: str, submit_key: str,
                        matcher: Matcher | None = None, *, config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Match the blind answer with the reference (``matcher``; default the ``rules`` judge) — HakushoBench §3.3:
    a match → accepted once ``verifiers`` independent annotators matched this revision (else back to the queue
    for the next); a mismatch → ``revise`` (back to the author); undecided (the judge could not tell) →
    ``adjudicating`` (an admin or a third annotator rules same / different, :mod:`zuhyo.annotate.adjudicate`).
    ``[protocol] adjudicate`` changes which go to adjudication (``all``, ``none``).

    The judge runs between two short transactions, so a slow model judge never holds the write lock; the second
    re-checks that the assignment is still open and the item unchanged.
    """
    from zuhyo.annotate.workflow_match import rules_matcher

    answer = non_empty(answer, "answer")
    with db.read() as s:
        claimed = claim(s, user_id, submit_key, assignment_id, "verify", "annotator")
        if isinstance(claimed, SubmitResult):
            return claimed
        user, row = claimed
        assert row.qa_item_id is not None
        item = qa_item(s, row.qa_item_id)
        question, reference, revision = item.question, item.answer, item.revision
    outcome = (matcher or rules_matcher)(question, reference, answer)

    def work(s: Session) -> SubmitResult:
        claimed = claim(s, user_id, submit_key, assignment_id, "verify", "annotator")
        if isinstance(claimed, SubmitResult):
            return claimed
        user, row = claimed
        assert row.qa_item_id is not None
        item = qa_item(s, row.qa_item_id)
        if item.revision != revision or item.status != "verifying":
            raise Conflict(f"QA item {item.id} changed while it was being verified; ask for the next task")
        s.add(VerificationRow(qa_item_id=item.id, round=row.round, item_revision=item.revision, user_id=user.id,
                              answer=answer, verdict=outcome.verdict, judge=outcome.judge,
                              judgment={"reason": outcome.reason}, meta={"assignment_id": row.id},
                              created_at=utcnow()))
        set_assignment(s, row, "submitted", actor=user.name, user_id=user.id)
        log_action(s, actor=user.name, user_id=user.id, action="verify_answer", target_type="qa_item",
                   target_id=item.id, after={"round": row.round, "answer": answer, "verdict": outcome.verdict,
                                             "judge": outcome.judge})
        s.flush()
        if outcome.verdict == "match":
            passed = len(passing_verifications(item, gather_evidence(s, [item.id])[item.id]))
            status, reason = ("accepted", None) if passed >= config.gates.verifiers else ("authored", None)
        else:
            status = "adjudicating" if config.gates.adjudicates(outcome.verdict) else "revise"
            reason = f"verification round {row.round}: {outcome.verdict}"
        update_qa_item(s, item, actor=user.name, user_id=user.id, action=f"verify_{outcome.verdict}",
                       status=status, reason=reason)
        return acknowledge(s, user, SubmitResult(key=submit_key, step="verify", outcome=status,
                                                 assignment_id=row.id, qa_item_id=item.id, item_status=status,
                                                 verdict=outcome.verdict))

    return transact(db, work)


def _may_revise(user: UserRow, item: QAItemRow) -> bool:
    return "admin" in (user.roles or []) or (item.author_id is not None and item.author_id == user.id)


def _revision_task(s: Session, item: QAItemRow) -> RevisionTask:
    verifs = s.scalars(select(VerificationRow).where(VerificationRow.qa_item_id == item.id)
                       .order_by(VerificationRow.id))
    revs = s.scalars(select(ReviewRow).where(ReviewRow.qa_item_id == item.id).order_by(ReviewRow.id))
    return RevisionTask(
        qa_item_id=item.id, figure=figure_view(s, item.figure_id), question=item.question, answer=item.answer,
        difficulty=list(item.difficulty or []), revision=item.revision,
        flow=str((item.meta or {}).get("flow", "verify")),
        verifications=[VerificationView(round=v.round, item_revision=v.item_revision, user_id=v.user_id,
                                        answer=v.answer, verdict=v.verdict, judge=v.judge) for v in verifs],
        reviews=[ReviewView(round=r.round, item_revision=r.item_revision, user_id=r.user_id, rating=r.rating,
                            comment=r.comment, correction=r.correction) for r in revs],
        flags=open_flags(s, [item.id]), grading=grading_view(item),
        grading_stale=bool((item.meta or {}).get("grading_stale")))


def _show_references(db: Database, user_id: int, item_ids: list[int]) -> None:
    """Record that the revise pages showed ``user_id`` these items' references, in a write transaction only when
    something is new (an author is exposed to their own item anyway; re-views add nothing)."""
    if not item_ids:
        return
    with db.read() as s:
        user = require(s, user_id)
        evidence = gather_evidence(s, item_ids)
        authors = dict(s.execute(select(QAItemRow.id, QAItemRow.author_id).where(QAItemRow.id.in_(item_ids))).all())
        pending = [i for i in item_ids if authors.get(i) != user.id
                   and "revise" not in evidence[i].shown.get(user.id, set())]
    if not pending:
        return

    def work(s: Session) -> None:
        user = require(s, user_id)
        for item_id in pending:
            record_shown(s, user, qa_item(s, item_id), "revise")

    transact(db, work)


def list_revisions(db: Database, user_id: int) -> list[RevisionTask]:
    """Items waiting for revision that this user may revise: their own, or every one for an admin. The list
    shows every answer, so it is recorded as having shown this user the references."""
    with db.read() as s:
        user = require(s, user_id)
        query = select(QAItemRow).where(QAItemRow.status == "revise").order_by(QAItemRow.id)
        if "admin" not in (user.roles or []):
            query = query.where(QAItemRow.author_id == user.id)
        tasks = [_revision_task(s, item) for item in s.scalars(query)]
        admin = "admin" in (user.roles or [])
    if admin:  # an author's list holds only their own items, whose reference they wrote
        _show_references(db, user_id, [task.qa_item_id for task in tasks])
    return tasks


def count_revisions(db: Database, user_id: int) -> int:
    """How many items wait for this user's revision (the home page's count: shows no reference)."""
    with db.read() as s:
        user = require(s, user_id)
        query = select(func.count(QAItemRow.id)).where(QAItemRow.status == "revise")
        if "admin" not in (user.roles or []):
            query = query.where(QAItemRow.author_id == user.id)
        return int(s.scalar(query) or 0)


def get_revision(db: Database, user_id: int, qa_item_id: int) -> RevisionTask:
    """One item waiting for revision, with its verifications, reviews and flags (author or admin only)."""
    with db.read() as s:
        user = require(s, user_id)
        item = qa_item(s, qa_item_id)
        if not _may_revise(user, item):
            raise NotAllowed(f"QA item {item.id}: only its author or an admin may revise it")
        if item.status != "revise":
            raise Conflict(f"QA item {item.id} is {item.status}, not waiting for revision")
        task = _revision_task(s, item)
    _show_references(db, user_id, [qa_item_id])
    return task


def submit_revision(db: Database, user_id: int, qa_item_id: int, question: str, answer: str,
                    difficulty: list[str] | None, submit_key: str, comment: str | None = None, *,
                    grading: Grading | None = None, grading_confirmed: bool = False,
                    config: WorkflowConfig = DEFAULT_CONFIG) -> SubmitResult:
    """Revise an item in ``revise`` (its author, or an admin): verification items go back to blind verification
    in the next round (to a user independent of it); reviewed items to a new review round. A resubmission with
    the question, answer and grading data unchanged is refused (it would only reach another verifier or expert
    unchanged); a new answer on an item with grading data needs that data edited or ``grading_confirmed``
    (:func:`zuhyo.annotate.grading.grading_changes`); under the hakusho protocol the revision meets §3.2
    (:func:`check_requirements`)."""
    question = non_empty(question, "question")
    answer = non_empty(answer, "answer")
    flags = _difficulty(difficulty) if difficulty is not None else None

    def work(s: Session) -> SubmitResult:
        user = require(s, user_id)
        done = replay(s, submit_key, user.id)
        if done is not None:
            return done
        item = qa_item(s, qa_item_id)
        if not _may_revise(user, item):
            raise NotAllowed(f"QA item {item.id}: only its author or an admin may revise it")
        if item.status != "revise":
            raise Conflict(f"QA item {item.id} is {item.status}, not waiting for revision")
        answer_changed = answer != item.answer.strip()
        graded, confirmed = grading_changes(item, grading, answer_changed=answer_changed,
                                            confirmed=grading_confirmed)
        if question == item.question.strip() and not answer_changed and not graded:
            raise WorkflowError(f"QA item {item.id}: the question, the answer and the grading data are unchanged; "
                                "change what the verification or review found wrong, or discard the item")
        if config.gates.protocol_of(item.origin, item.style) == "hakusho":
            check_requirements(question, answer)
        meta = dict(item.meta or {})
        flow = meta.get("flow", "verify")
        counter = "verify_round" if flow == "verify" else "review_round"
        meta[counter] = int(meta.get(counter, 1)) + 1
        if flow == "review":
            meta["review_start"] = meta[counter]  # a revised item is reviewed afresh: two experts again
        if comment:
            meta.setdefault("revision_comments", []).append({"user_id": user.id, "comment": comment})
        changes: dict[str, Any] = {"question": question, "answer": answer, "meta": meta, "reason": None,
                                   "status": "authored" if flow == "verify" else "reviewing", **graded}
        if flags is not None:
            changes["difficulty"] = flags
        update_qa_item(s, item, actor=user.name, user_id=user.id, action="revise", grading_confirmed=confirmed,
                       **changes)
        return acknowledge(s, user, SubmitResult(key=submit_key, step="revise", outcome="revised",
                                                 qa_item_id=item.id, item_status=item.status))

    return transact(db, work)


def discard(db: Database, user_id: int, qa_item_id: int, reason: str, submit_key: str | None = None) -> SubmitResult:
    """Discard an item (its author while it waits for revision, or an admin at any time); kept, never deleted."""
    reason = non_empty(reason, "discard reason")

    def work(s: Session) -> SubmitResult:
        user = require(s, user_id)
        if submit_key is not None:
            done = replay(s, submit_key, user.id)
            if done is not None:
                return done
        item = qa_item(s, qa_item_id)
        is_admin = "admin" in (user.roles or [])
        if not is_admin and not (item.author_id == user.id and item.status == "revise"):
            raise NotAllowed(f"QA item {item.id}: only an admin, or its author while it waits for revision, "
                             "may discard it")
        if item.status == "discarded":
            raise Conflict(f"QA item {item.id} is already discarded")
        for live in s.scalars(select(AssignmentRow).where(AssignmentRow.qa_item_id == item.id,
                                                          AssignmentRow.status == "open")):
            set_assignment(s, live, "released", actor=user.name, user_id=user.id, reason="item discarded")
        update_qa_item(s, item, actor=user.name, user_id=user.id, action="discard", status="discarded",
                       reason=reason)
        result = SubmitResult(key=submit_key or "", step="revise", outcome="discarded", qa_item_id=item.id,
                              item_status="discarded")
        return acknowledge(s, user, result) if submit_key is not None else result

    return transact(db, work)


def resolve_flag(db: Database, user_id: int, flag_id: int, status: str, resolution: str) -> None:
    """Mark an audit flag resolved or dismissed with a note (an admin, an expert, or the item's author)."""
    if status not in ("resolved", "dismissed"):
        raise WorkflowError(f"flag status must be resolved or dismissed (got {status!r})")
    resolution = non_empty(resolution, "resolution")

    def work(s: Session) -> None:
        user = require(s, user_id)
        flag = s.get(QAFlag, flag_id)
        if flag is None:
            raise NotFound(f"flag {flag_id}: no such flag")
        item = qa_item(s, flag.qa_item_id)
        roles = set(user.roles or [])
        if not (roles & {"admin", "expert"} or item.author_id == user.id):
            raise NotAllowed(f"flag {flag_id}: only an admin, an expert or the item's author may resolve it")
        if flag.status != "open":
            raise Conflict(f"flag {flag_id} is already {flag.status}")
        before = {"status": flag.status}
        flag.status, flag.resolution, flag.resolved_by_id, flag.resolved_at = status, resolution, user.id, utcnow()
        log_action(s, actor=user.name, user_id=user.id, action=f"flag_{status}", target_type="qa_flag",
                   target_id=flag.id, before=before, after={"status": status, "resolution": resolution})

    transact(db, work)
