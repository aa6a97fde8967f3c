"""The quality audit (``zuhyo audit``): ask a panel of models every QA item with and without its image, judge
the answers against the reference, and flag items for people to look at (issue 11, item 6).

Which items: the QA items whose status is one of :data:`AUDIT_STATUSES` (not rejected or discarded), or those of
``statuses``. Each item is asked the way evaluation asks it: as the :class:`~zuhyo.schema.Sample` of
:func:`~zuhyo.construct.qa.items.qa_item_to_sample` (astro-style items as AstroChart samples, hakusho-style ones as
HakushoBench samples), with the Direct prompt of :func:`zuhyo.evaluate.prompting.render_prompt`, temperature 0, and
the image prepared by :func:`zuhyo.images.prepare.prepare_image` to the backend's pixel limit, as the evaluation
runner does. Purpose ``audit_blind`` sends the very same prompt without the image (the text-only probe),
``audit_image`` with it.

Answers are judged the way evaluation scores the item (``auto``: astro items through the AstroChart routing,
hakusho items by ``rules``, or ``auto:<spec>`` adding the LLM judges; any judge spec may be given), on the answer
the scoring stage would see (:func:`~zuhyo.evaluate.judges.answer_extraction.scored_answer`). Undecided or unscored
verdicts are stored as ``undecided`` and never count as wrong. The flag rules are in
:mod:`zuhyo.construct.qa.audit_rules`.

Storage: one ``qa_model_answers`` row per (item, purpose, model, prompt version, item revision): a re-run asks
nothing again, another model adds its answers beside, a revised item (new revision) is asked again. A call that
still fails after the retries of :class:`zuhyo.construct.asking.RetryingBackend` is stored as an error (no answer, no
verdict), counted, recorded in the stage's errors and asked again on the next run; an item's flags for a purpose
wait until every model of the panel has answered it. A flag is a ``qa_flags`` row with its evidence (question,
reference, every model's answer and verdict, the pairwise agreements) and a fingerprint of the item revision,
the models with their prompt versions and the judge, so a re-run adds nothing twice; each new flag is logged in
``actions``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.qa.audit_rules import (
    DEFAULT_SCATTER,
    DEFAULT_TEXT_ONLY_RULE,
    TEXT_ONLY_RULES,
    JudgedAnswer,
    Pairs,
    ambiguity,
    pair_key,
    reference_doubt,
    text_only,
)
from zuhyo.construct.qa.items import log_action, qa_item_to_sample
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.orm import iso_utc, utcnow
from zuhyo.construct.workspace.qa_tables import QAFlag, QAItemRow, QAModelAnswer
from zuhyo.construct.workspace.records import record_error, resolve_error
from zuhyo.construct.workspace.tables import FigureRow
from zuhyo.evaluate.judges.base import Judge, JudgeInput
from zuhyo.models.base import ModelBackend, PreparedImage
from zuhyo.schema import Sample

STAGE = "audit"
ACTOR = "zuhyo audit"
BLIND = "audit_blind"
WITH_IMAGE = "audit_image"
PURPOSES = (BLIND, WITH_IMAGE)
FLAG_KINDS = ("text_only", "reference_doubt", "ambiguity")
#: Statuses audited by default: every QA item still in play (not rejected or discarded).
AUDIT_STATUSES = ("draft", "authored", "verifying", "revise", "reviewing", "accepted")
#: The benchmark a QA item of a style is asked and judged as (prompt family and judge routing).
STYLE_BENCHMARK = {"astro": "astrochart", "hakusho": "hakusho"}
PROMPT_STYLE = "direct"


@dataclass(frozen=True)
class AuditOptions:
    """How the audit asks and flags."""

    text_only_rule: str = DEFAULT_TEXT_ONLY_RULE
    """any | majority | all (:func:`zuhyo.construct.qa.audit_rules.text_only`)."""
    scatter: float = DEFAULT_SCATTER
    """Pairwise disagreement rate from which the answers are ambiguous."""
    statuses: tuple[str, ...] = AUDIT_STATUSES
    concurrency: int = 8
    """Requests in flight (and items in flight)."""
    max_tokens: int = 8192


class AuditFailure(BaseModel):
    """A model call that failed for one item."""

    qa_item_id: int
    purpose: str
    model: str
    reason: str


class AuditReport(BaseModel):
    """What one audit run did (counts for this run)."""

    models: list[str]
    judge: str
    items: int = 0
    asked: int = 0
    """Model calls made (answers + errors)."""
    answers: int = 0
    errors: int = 0
    skipped_existing: int = 0
    """Answers already stored for this item revision, model and prompt version (not asked again)."""
    judged: int = 0
    undecided: int = 0
    """Answers the judge could not decide (never counted as wrong)."""
    judge_errors: int = 0
    incomplete: int = 0
    """Items whose flags for a purpose wait for a model's failed call."""
    retries: int = 0
    flags: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(FLAG_KINDS, 0))
    """New flags added by this run, per kind."""
    flags_existing: int = 0
    """Flags that fired again with the same fingerprint (already stored)."""
    error_items: list[AuditFailure] = Field(default_factory=list)


@dataclass
class _Answer:
    """A stored answer (a detached copy of its row)."""

    id: int
    model: str
    answer: str | None
    raw: str | None
    verdict: str | None
    score: float | None
    judge: str | None
    error: str | None
    meta: dict[str, Any] = field(default_factory=dict)

    def judged(self) -> JudgedAnswer:
        outcome = "error" if self.error else str(self.meta.get("outcome", "answered"))
        return JudgedAnswer(model=self.model, answer=self.answer, verdict=self.verdict, outcome=outcome)

    def evidence(self) -> dict[str, Any]:
        return {"model": self.model, "answer": self.answer, "verdict": self.verdict, "score": self.score,
                "outcome": self.meta.get("outcome"), "judge_reason": self.meta.get("judge_reason")}


def audit_sample(item: QAItemRow, figure: FigureRow) -> Sample:
    """The item as the audit asks and judges it (its style's benchmark decides prompt and judge)."""
    return qa_item_to_sample(item, figure, None, benchmark=STYLE_BENCHMARK.get(item.style or "", "workspace"))


def audit_items(ws: Workspace, statuses: tuple[str, ...]) -> list[tuple[QAItemRow, FigureRow]]:
    """The QA items with one of ``statuses`` and their figures, in id order."""
    with ws.db.read() as s:
        rows = s.execute(select(QAItemRow, FigureRow).join(FigureRow, QAItemRow.figure_id == FigureRow.id)
                         .where(QAItemRow.status.in_(statuses)).order_by(QAItemRow.id)).all()
        return [(row[0], row[1]) for row in rows]


def run_audit(ws: Workspace, backends: list[ModelBackend], judge: Judge, options: AuditOptions | None = None, *,
              on_start: Callable[[int], None] | None = None,
              on_item: Callable[[str, str], None] | None = None, close: bool = True) -> AuditReport:
    """Audit the items (module docstring); ``on_item(item key, outcome)`` with outcome ``audited``, ``existing``
    (nothing asked) or ``error``. Backends and judge are closed at the end unless ``close`` is False."""
    options = options or AuditOptions()
    if options.text_only_rule not in TEXT_ONLY_RULES:
        raise ValueError(f"unknown text-only rule {options.text_only_rule!r}; choose from {', '.join(TEXT_ONLY_RULES)}")
    specs = [b.spec for b in backends]
    if not specs or len(set(specs)) != len(specs):
        raise ValueError(f"the audit needs one or more distinct models, got {specs}")
    report = AuditReport(models=specs, judge=judge.id)
    items = audit_items(ws, options.statuses)
    report.items = len(items)
    if on_start is not None:
        on_start(len(items))
    params = {"models": specs, "judge": judge.id, "prompt": PROMPT_STYLE, "text_only_rule": options.text_only_rule,
              "scatter": options.scatter, "statuses": list(options.statuses)}
    with ws.run(STAGE, params, lock=True) as run:
        auditor = _Auditor(ws, backends, judge, options, report, run.id)
        asyncio.run(auditor.audit_all(items, on_item, close))
        run.counts = report.model_dump(include={"items", "asked", "answers", "errors", "skipped_existing",
                                                "judged", "undecided", "judge_errors", "incomplete", "retries",
                                                "flags", "flags_existing"})
    return report


class _Auditor:
    """One run's state: the backends, the judge, the gates and the report."""

    def __init__(self, ws: Workspace, backends: list[ModelBackend], judge: Judge, options: AuditOptions,
                 report: AuditReport, run_id: int) -> None:
        from zuhyo.models.base import GenerationConfig

        self.ws, self.backends, self.judge, self.options = ws, backends, judge, options
        self.report, self.run_id = report, run_id
        self.config = GenerationConfig(temperature=0.0, max_tokens=options.max_tokens)
        self.item_gate = asyncio.Semaphore(options.concurrency)
        self.request_gate = asyncio.Semaphore(options.concurrency)

    async def audit_all(self, items: list[tuple[QAItemRow, FigureRow]], on_item: Callable[[str, str], None] | None,
                        close: bool) -> None:
        async def one(item: QAItemRow, figure: FigureRow) -> None:
            async with self.item_gate:
                outcome = await self.audit_item(item, figure)
            if on_item is not None:
                on_item(item.item_key, outcome)

        try:
            await asyncio.gather(*(one(i, f) for i, f in items))
        finally:
            if close:
                for b in self.backends:
                    await b.aclose()
                await self.judge.aclose()
        self.report.retries = sum(getattr(b, "retries", 0) for b in self.backends)
        self.report.error_items.sort(key=lambda e: (e.qa_item_id, e.purpose, e.model))

    # -- one item -----------------------------------------------------------------------------------------------

    async def audit_item(self, item: QAItemRow, figure: FigureRow) -> str:
        from zuhyo.evaluate.prompting import render_prompt

        sample = audit_sample(item, figure)
        rendered = render_prompt(sample, PROMPT_STYLE)
        stored = self._stored(item, rendered.version)
        todo = [(p, b) for p in PURPOSES for b in self.backends
                if (p, b.spec) not in stored or stored[(p, b.spec)].error]
        self.report.skipped_existing += len(self.backends) * len(PURPOSES) - len(todo)
        images = await self._images(item, figure, {b.max_image_pixels for p, b in todo if p == WITH_IMAGE})
        asked = await asyncio.gather(*(self._ask(item, sample, rendered.text, rendered.version, p, b,
                                                 stored.get((p, b.spec)), images) for p, b in todo))
        for (p, b), answer in zip(todo, asked, strict=True):
            stored[(p, b.spec)] = answer
        for k, answer in stored.items():  # answers of an earlier run whose judge failed or was another one
            if (k[0], k[1]) not in {(p, b.spec) for p, b in todo} and answer.error is None \
                    and (answer.verdict is None or answer.judge != self.judge.id):
                await self._judge_and_store(item, sample, answer)
        for purpose in PURPOSES:
            panel = [stored.get((purpose, b.spec)) for b in self.backends]
            if any(a is None or a.error for a in panel):
                self.report.incomplete += 1
                continue
            await self._flag(item, sample, purpose, rendered.version, [a for a in panel if a is not None])
        if any(a.error for a in asked):
            return "error"
        return "audited" if todo else "existing"

    def _stored(self, item: QAItemRow, version: str) -> dict[tuple[str, str], _Answer]:
        specs = [b.spec for b in self.backends]
        with self.ws.db.read() as s:
            rows = s.scalars(select(QAModelAnswer).where(
                QAModelAnswer.qa_item_id == item.id, QAModelAnswer.purpose.in_(PURPOSES),
                QAModelAnswer.model.in_(specs), QAModelAnswer.prompt_version == version,
                QAModelAnswer.item_revision == item.revision)).all()
            return {(r.purpose, r.model): _Answer(r.id, r.model, r.answer, r.raw, r.verdict, r.score, r.judge,
                                                  r.error, dict(r.meta or {})) for r in rows}

    async def _images(self, item: QAItemRow, figure: FigureRow,
                      limits: set[int | None]) -> dict[int | None, PreparedImage | str]:
        """The figure prepared once per pixel limit needed, or why it could not be."""
        from zuhyo.images.prepare import prepare_image

        out: dict[int | None, PreparedImage | str] = {}
        if not limits:
            return out
        path = self.ws.images.path_for(figure.sha256)
        if path is None:
            return dict.fromkeys(limits, f"image {figure.sha256[:12]} of figure {figure.id} is missing from the "
                                         "image store")
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as e:
            return dict.fromkeys(limits, f"image: {e}")
        for limit in limits:
            try:
                out[limit] = await asyncio.to_thread(prepare_image, data, max_pixels=limit,
                                                     label=f"qa item {item.id}")
            except Exception as e:  # noqa: BLE001 - ImageError and the like: this item's error, the stage goes on
                out[limit] = f"image: {e}"
        return out

    async def _ask(self, item: QAItemRow, sample: Sample, prompt: str, version: str, purpose: str,
                   backend: ModelBackend, previous: _Answer | None,
                   images: dict[int | None, PreparedImage | str]) -> _Answer:
        from zuhyo.evaluate.runner import reply_outcome
        from zuhyo.models.base import ChatRequest, ModelError

        image = images.get(backend.max_image_pixels) if purpose == WITH_IMAGE else None
        error: str | None = image if isinstance(image, str) else None
        reply = None
        if error is None:
            request = ChatRequest(prompt=prompt, image=image if isinstance(image, PreparedImage) else None,
                                  context=tuple(sample.context), config=self.config)
            self.report.asked += 1
            async with self.request_gate:
                try:
                    reply = await backend.generate(request)
                except ModelError as e:
                    error = f"model call failed: {e}"
        key = (item.id, purpose, backend.spec, version, item.revision)
        if reply is None:
            reason = f"qa item {item.id} ({purpose}, {backend.spec}): {error}"
            self.report.errors += 1
            self.report.error_items.append(AuditFailure(qa_item_id=item.id, purpose=purpose, model=backend.spec,
                                                        reason=str(error)))
            answer = _Answer(previous.id if previous else 0, backend.spec, None, None, None, None, None, str(error))
            answer.id = self.ws.db.write_retrying(lambda s: self._save(s, key, answer, error_reason=reason))
            return answer
        self.report.answers += 1
        answer = _Answer(previous.id if previous else 0, backend.spec, None, reply.text or "", None, None, None,
                         None, {"outcome": reply_outcome(reply), "finish_reason": reply.finish_reason})
        await self._judge_and_store(item, sample, answer, key=key)
        return answer

    async def _judge_and_store(self, item: QAItemRow, sample: Sample, answer: _Answer,
                               key: tuple[int, str, str, str, int] | None = None) -> None:
        """Judge ``answer`` against the reference and store it (a new row when ``key`` is given)."""
        from zuhyo.evaluate.judges.answer_extraction import scored_answer
        from zuhyo.evaluate.prompting import prompt_family

        text = scored_answer(answer.raw or "", PROMPT_STYLE, prompt_family(sample))
        answer.answer = text
        meta = {k: v for k, v in answer.meta.items() if k not in ("judge_error", "judge_reason", "decided_by")}
        try:
            verdict = await self.judge.judge(JudgeInput(question=sample.question, references=tuple(sample.answers),
                                                        response=text, raw_response=answer.raw, sample=sample))
        except Exception as e:  # noqa: BLE001 - a judge failure is never a wrong answer: judged again next run
            self.report.judge_errors += 1
            answer.verdict, answer.score, answer.judge = None, None, None
            meta["judge_error"] = f"{type(e).__name__}: {e}"
        else:
            self.report.judged += 1
            answer.verdict = {"correct": "correct", "incorrect": "wrong"}.get(verdict.verdict, "undecided")
            self.report.undecided += answer.verdict == "undecided"
            answer.score, answer.judge = verdict.score, self.judge.id
            meta.update(judge_reason=verdict.reason, decided_by=verdict.decided_by)
        answer.meta = meta
        answer.id = self.ws.db.write_retrying(lambda s: self._save(s, key, answer))

    def _save(self, s: Session, key: tuple[int, str, str, str, int] | None, answer: _Answer,
              error_reason: str | None = None) -> int:
        row = s.get(QAModelAnswer, answer.id) if answer.id else None
        if row is None:
            if key is None:
                raise ValueError(f"answer {answer.id} of {answer.model} vanished from the workspace")
            qa_id, purpose, model, version, revision = key
            row = QAModelAnswer(qa_item_id=qa_id, purpose=purpose, model=model, prompt_version=version,
                                item_revision=revision, created_at=utcnow())
            s.add(row)
        row.answer, row.raw, row.verdict, row.score = answer.answer, answer.raw, answer.verdict, answer.score
        row.judge, row.error, row.meta, row.run_id = answer.judge, answer.error, dict(answer.meta), self.run_id
        s.flush()
        if key is not None:
            qa_id, purpose, model = key[0], key[1], key[2]
            error_key = f"qa/{qa_id}/{purpose}/{model}"
            if error_reason is not None:
                record_error(s, STAGE, error_key, f"qa item {qa_id}", error_reason, run_id=self.run_id)
            else:
                resolve_error(s, STAGE, error_key)
        return row.id

    # -- flags --------------------------------------------------------------------------------------------------

    async def _pairs(self, sample: Sample, answers: list[_Answer]) -> Pairs:
        """Pairwise agreement of the given answers, judged by the item's judge with one answer as the other's
        reference; cached in the first answer's ``meta["pairs"][judge id]``."""
        pairs: Pairs = {}
        given = sorted((a for a in answers if a.judged().given), key=lambda a: a.model)
        for a, b in combinations(given, 2):
            cache = a.meta.get("pairs", {}).get(self.judge.id, {})
            verdict = cache.get(str(b.id))
            if verdict is None:
                verdict = await self._agreement(sample, a, b)
                if verdict is not None:
                    new_cache = {**cache, str(b.id): verdict}
                    a.meta = {**a.meta, "pairs": {**a.meta.get("pairs", {}), self.judge.id: new_cache}}
                    self.ws.db.write_retrying(partial(self._save, key=None, answer=a))
            pairs[pair_key(a.model, b.model)] = verdict or "undecided"
        return pairs

    async def _agreement(self, sample: Sample, a: _Answer, b: _Answer) -> str | None:
        """agree, disagree or undecided for answers ``a`` and ``b``; None when the judge failed."""
        astro = sample.astro.model_copy(update={"key_points": []}) if sample.astro is not None else None
        as_reference = sample.model_copy(update={"answers": [a.answer or ""], "astro": astro})
        try:
            v = await self.judge.judge(JudgeInput(question=sample.question, references=(a.answer or "",),
                                                  response=b.answer or "", raw_response=b.raw, sample=as_reference))
        except Exception:  # noqa: BLE001 - undecided this run, judged again next run
            self.report.judge_errors += 1
            return None
        return {"correct": "agree", "incorrect": "disagree"}.get(v.verdict, "undecided")

    async def _flag(self, item: QAItemRow, sample: Sample, purpose: str, version: str,
                    answers: list[_Answer]) -> None:
        judged = [a.judged() for a in answers]
        evidence: dict[str, Any] = {
            "purpose": purpose, "question": item.question, "reference": item.answer, "item_revision": item.revision,
            "prompt_version": version, "judge": self.judge.id, "answers": [a.evidence() for a in answers]}
        fired: list[tuple[str, str, dict[str, Any]]] = []
        if purpose == BLIND:
            detail = text_only(judged, self.options.text_only_rule)
            if detail:
                fired.append(("text_only", detail, {**evidence, "rule": self.options.text_only_rule}))
        else:
            pairs = await self._pairs(sample, answers)
            evidence["pairs"] = [{"models": list(k), "agreement": v} for k, v in sorted(pairs.items())]
            detail = reference_doubt(judged, pairs)
            if detail:
                fired.append(("reference_doubt", detail, evidence))
            detail = ambiguity(judged, pairs, self.options.scatter)
            if detail:
                fired.append(("ambiguity", detail, {**evidence, "scatter": self.options.scatter}))
        models = sorted([a.model, version] for a in answers)
        for kind, detail, ev in fired:
            fingerprint = hashlib.sha256(json.dumps([kind, item.revision, models, self.judge.id],
                                                    ensure_ascii=False).encode("utf-8")).hexdigest()
            added = self.ws.db.write_retrying(partial(self._save_flag, item=item, kind=kind, detail=detail,
                                                      evidence=ev, fingerprint=fingerprint))
            if added:
                self.report.flags[kind] += 1
            else:
                self.report.flags_existing += 1

    def _save_flag(self, s: Session, item: QAItemRow, kind: str, detail: str, evidence: dict[str, Any],
                   fingerprint: str) -> bool:
        if s.scalar(select(QAFlag.id).where(QAFlag.qa_item_id == item.id, QAFlag.kind == kind,
                                            QAFlag.fingerprint == fingerprint)) is not None:
            return False
        flag = QAFlag(qa_item_id=item.id, kind=kind, fingerprint=fingerprint, detail=detail, evidence=evidence,
                      status="open", meta={}, run_id=self.run_id, created_at=utcnow())
        s.add(flag)
        s.flush()
        log_action(s, actor=ACTOR, action="audit_flag", target_type="qa_item", target_id=item.id,
                   after={"flag_id": flag.id, "kind": kind, "detail": detail, "status": "open"})
        return True


def list_flags(ws: Workspace, *, status: str | None = "open", kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The flags (``status`` None: all) by item, oldest first, with their item's key, question and reference."""
    query = (select(QAFlag, QAItemRow).join(QAItemRow, QAFlag.qa_item_id == QAItemRow.id)
             .order_by(QAFlag.qa_item_id, QAFlag.id))
    if status is not None:
        query = query.where(QAFlag.status == status)
    if kinds:
        query = query.where(QAFlag.kind.in_(kinds))
    with ws.db.read() as s:
        return [_flag_dict(row[0], row[1]) for row in s.execute(query).all()]


def _flag_dict(f: QAFlag, q: QAItemRow) -> dict[str, Any]:
    return {"id": f.id, "qa_item_id": f.qa_item_id, "item_key": q.item_key, "kind": f.kind, "status": f.status,
            "detail": f.detail, "question": q.question, "reference": q.answer, "evidence": f.evidence,
            "created_at": iso_utc(f.created_at)}
