"""``zuhyo draft``: QA pairs drafted by a model, one per figure and question kind, checked before people see them.

Which figures (:func:`select_targets`):

- ``--style astro`` (DomainCQA §3.2, §4.2, Table 1; the kinds are in :mod:`zuhyo.construct.qa.draft_kinds`): the FQA
  kinds for every figure of the current sample (:func:`zuhyo.construct.select.sample_stage.current_sample`; DomainCQA
  draws the FQA charts by Algorithm 1), or every kept figure with ``all_kept``; with no sample and no
  ``all_kept`` it stops with an error rather than guess. The AQA kinds for every chart abstract: the figure of
  a paper's latest ``abstract_outcomes`` row when its outcome is ``majority`` (Algorithm 2), with the paper's
  title, abstract and conclusion (``documents.meta``), the caption and the citing text as context;
- ``--style hakusho`` (HakushoBench §3.2): one short-answer question per figure of the current sample when
  there is one, else per kept figure.

Figures whose current decision in some stage is drop are left out. Each draft is one model call with the image
(:func:`zuhyo.images.prepare.prepare_image`) whose reply must validate against the kind's JSON schema (sent as
``response_format`` when ``constrained``); an invalid reply is re-asked with what was wrong
(:func:`~zuhyo.evaluate.judges.validated_reply.ask_validated`, 3 replies in all), transient failures are retried
by the caller's :class:`zuhyo.construct.asking.RetryingBackend`, and a draft with no valid reply is a per-item error
(``item_errors``, stage ``draft``, keyed like the draft), never a guessed item.

A valid draft is stored through :func:`zuhyo.construct.qa.items.add_qa_item` under
``draft/<figure>/<style>/<kind>/<model>/<prompt version>`` with origin ``draft``, the model, the prompt version
and the raw reply: a re-run asks nothing twice, a run with another model (or prompt version) adds its drafts
beside the earlier ones. A draft whose answer leaks into its question, that repeats another live item of the
same figure (:mod:`zuhyo.construct.qa.draft_checks`), or (hakusho) that stays a yes/no or multiple-choice question
after the re-asks, is stored with status ``rejected`` and the reason, and counted; nothing is dropped silently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.qa.abstract_vote import chart_abstracts
from zuhyo.construct.qa.draft_checks import choice_reason, duplicate_reason, leak_reason, yes_no_reason
from zuhyo.construct.qa.draft_kinds import DraftKind, kinds_for, paper_context
from zuhyo.construct.qa.draft_mix import (
    TABLE1_AQA,
    TABLE1_AQA_CHARTS,
    TABLE1_FQA,
    TABLE1_FQA_CHARTS,
    MixPlan,
    plan_mix,
)
from zuhyo.construct.qa.items import add_qa_item
from zuhyo.construct.select.labelling import parse_json_reply, schema_instruction
from zuhyo.construct.select.sample_stage import current_sample
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.qa_tables import QAItemRow
from zuhyo.construct.workspace.queries import dropped_figure_ids
from zuhyo.construct.workspace.records import record_error, resolve_error
from zuhyo.construct.workspace.tables import Document, FigureRow
from zuhyo.errors import DataError
from zuhyo.models.base import GenerationConfig, ModelBackend, PreparedImage

STAGE = "draft"
ACTOR = "zuhyo draft"
#: Replies asked for per draft before it is an error (the first answer and two re-asks).
ATTEMPTS = 3
#: Why a draft can be rejected; each is counted in :attr:`DraftReport.rejected`.
REJECT_KINDS = ("leak", "duplicate", "yes_no", "multiple_choice")


class DraftFailure(BaseModel):
    """A draft the stage could not make."""

    figure_id: int
    kind: str
    reason: str


class DraftReport(BaseModel):
    """What one run of ``zuhyo draft`` did (counts for this run)."""

    style: str
    model: str
    prompt_versions: dict[str, str]
    """Prompt version per kind."""
    source: str
    """Where the figures came from: sample, kept, or abstracts (astro AQA kinds only)."""
    figures: int = 0
    """Figures with something to draft."""
    abstracts: int = 0
    """Of those, chart abstracts (astro AQA kinds)."""
    drafted: int = 0
    """Drafts stored with status draft in this run."""
    rejected: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(REJECT_KINDS, 0))
    """Drafts stored with status rejected in this run, per reason."""
    skipped_existing: int = 0
    """Drafts already made by this model with this prompt version (nothing asked)."""
    errors: int = 0
    reasked: int = 0
    """Drafts that needed more than one reply."""
    retries: int = 0
    """Requests retried after 429/5xx/timeouts."""
    error_items: list[DraftFailure] = Field(default_factory=list)
    mix: str = "every"
    """The question mix (``every`` or ``table1``, :mod:`zuhyo.construct.qa.draft_mix`)."""
    planned: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Questions planned per family (FQA, AQA, hakusho) and kind."""
    abstracts_left_out: int = 0
    """Sampled charts not given FQA kinds because they are chart abstracts (disjoint sets, DomainCQA §4.1)."""


@dataclass
class Target:
    """A figure and the kinds to draft for it (``context``: the paper's, for AQA kinds)."""

    figure: FigureRow
    kinds: list[DraftKind]
    context: str = ""


@dataclass
class DraftPlan:
    """What :func:`select_targets` chose: the targets, where they came from and the question mix per family."""

    targets: list[Target]
    source: str
    abstracts: int
    plans: dict[str, MixPlan]
    """The mix per family: ``FQA`` and ``AQA`` (astro) or ``hakusho``."""
    abstracts_left_out: int = 0
    """Sampled charts left out of FQA because they are chart abstracts (FQA and AQA charts disjoint)."""


def draft_key(figure_id: int, kind: DraftKind, model: str, prompt_version: str) -> str:
    return f"draft/{figure_id}/{kind.style}/{kind.key_part}/{model}/{prompt_version}"


def select_targets(ws: Workspace, style: str, kinds: tuple[DraftKind, ...], *, all_kept: bool = False,
                   mix: str = "every", seed: int = 0, overlap: bool = False) -> DraftPlan:
    """The figures to draft for with their kinds (planned by :func:`zuhyo.construct.qa.draft_mix.plan_mix`), where
    they came from, and how many are chart abstracts. Astro FQA charts leave out the chart abstracts unless
    ``overlap`` (DomainCQA §4.1: 303 FQA charts and 257 abstracts, 560 distinct)."""
    with ws.db.read() as s:
        dropped = dropped_figure_ids(s)
        kept = [i for i in s.scalars(select(FigureRow.id).order_by(FigureRow.id)) if i not in dropped]
    abstracts = {f: d for d, f in chart_abstracts(ws).items() if f not in dropped}
    sample = [i for i in current_sample(ws) if i not in dropped]
    fqa = [k for k in kinds if not k.abstract_only]
    aqa = [k for k in kinds if k.abstract_only]
    if style == "hakusho":
        source = "sample" if sample and not all_kept else "kept"
        ids = sample if source == "sample" else kept
        left_out = 0
    else:
        source = "kept" if all_kept else "sample"
        ids = (kept if all_kept else sample) if fqa else []
        if fqa and not ids and not all_kept:
            raise DataError("no sampled figures to draft FQA questions for: run `zuhyo sample` first, or pass "
                            "--all-kept to draft for every kept figure")
        if not fqa:
            source = "abstracts"
        left_out = 0 if overlap else sum(1 for i in ids if i in abstracts)
        if not overlap:  # also when this run drafts FQA kinds only: a later AQA run must not overlap them
            ids = [i for i in ids if i not in abstracts]
    by_key = {k.key_part: k for k in kinds}
    plans = {"FQA" if style == "astro" else style: plan_mix(ids, [k.key_part for k in fqa], mix, seed,
                                                            paper=TABLE1_FQA, paper_charts=TABLE1_FQA_CHARTS)}
    if aqa:
        plans["AQA"] = plan_mix(list(abstracts), [k.key_part for k in aqa], mix, seed, paper=TABLE1_AQA,
                                paper_charts=TABLE1_AQA_CHARTS)
    per_figure: dict[int, list[DraftKind]] = {}
    for plan in plans.values():
        for fid, keys in plan.per_chart.items():
            per_figure.setdefault(fid, []).extend(by_key[k] for k in keys)
    targets: list[Target] = []
    with ws.db.read() as s:
        for fid in sorted(per_figure):
            fig = s.get(FigureRow, fid)
            assert fig is not None
            context = ""
            if fid in abstracts and aqa:
                doc = s.get(Document, abstracts[fid])
                context = paper_context(dict(doc.meta or {}) if doc else {}, fig.caption, list(fig.context or []))
            s.expunge(fig)
            targets.append(Target(fig, per_figure[fid], context))
    n_abstracts = sum(1 for t in targets if any(k.abstract_only for k in t.kinds))
    return DraftPlan(targets, source, n_abstracts, plans, left_out)


def form_reason(kind: DraftKind, question: str, answer: str) -> tuple[str, str] | None:
    """``(reject kind, reason)`` when a hakusho draft has a form HakushoBench §3.2 avoids, else None."""
    if kind.style != "hakusho":
        return None
    reason = yes_no_reason(question, answer)
    if reason:
        return "yes_no", reason
    reason = choice_reason(question)
    return ("multiple_choice", reason) if reason else None


@dataclass
class _Run:
    ws: Workspace
    backend: ModelBackend
    domain: str
    config: dict[str, GenerationConfig]
    run_id: int
    report: DraftReport
    done: set[str]


def run_drafting(ws: Workspace, backend: ModelBackend, style: str, *, categories: list[str] | None = None,
                 all_kept: bool = False, mix: str = "every", seed: int = 0, overlap: bool = False,
                 domain: str = "astronomy", concurrency: int = 4,
                 constrained: bool = True, max_tokens: int = 2048, close: bool = True,
                 on_start: Callable[[int], None] | None = None,
                 on_item: Callable[[int, str], None] | None = None) -> DraftReport:
    """Draft every missing (figure, kind) of ``style`` with ``backend``; see the module docstring.

    ``on_item(figure id, outcome)`` once per figure: ``drafted``, ``existing`` or ``error``. The backend is
    closed at the end unless ``close`` is False. DataError when astro FQA has no sample and not ``all_kept``.
    ``mix``, ``seed`` and ``overlap``: see :func:`select_targets` (``table1`` is for ``astro``).
    """
    try:
        if mix != "every" and style != "astro":
            raise DataError(f"--mix {mix} is DomainCQA's question mix: it needs --style astro")
        kinds = kinds_for(style, categories)
        plan = select_targets(ws, style, kinds, all_kept=all_kept, mix=mix, seed=seed, overlap=overlap)
        targets, source, n_abstracts = plan.targets, plan.source, plan.abstracts
    except (ValueError, DataError) as e:
        if close:
            asyncio.run(backend.aclose())
        raise DataError(str(e)) from None
    versions = {k.key_part: k.prompt.version for k in kinds}
    report = DraftReport(style=style, model=backend.spec, prompt_versions=versions, source=source,
                         figures=len(targets), abstracts=n_abstracts, mix=mix,
                         planned={fam: p.counts for fam, p in plan.plans.items()},
                         abstracts_left_out=plan.abstracts_left_out)
    with ws.db.read() as s:
        done = set(s.scalars(select(QAItemRow.item_key).where(QAItemRow.origin == "draft",
                                                              QAItemRow.model == backend.spec)))
    configs = {}
    for k in kinds:
        extra = {"response_format": {"type": "json_schema", "json_schema": {
            "name": "qa_draft", "strict": True, "schema": k.reply_model.model_json_schema()}}} if constrained else {}
        configs[k.key_part] = GenerationConfig(temperature=0.0, max_tokens=max_tokens, extra_body=extra)
    params = {"model": backend.spec, "style": style, "categories": categories or None, "all_kept": all_kept,
              "prompt_versions": versions, "domain": domain, "constrained": constrained, "mix": mix,
              "seed": seed, "overlap": overlap, "planned": report.planned}
    if on_start is not None:
        on_start(len(targets))
    with ws.run(STAGE, params, lock=True) as run:
        state = _Run(ws, backend, domain, configs, run.id, report, done)
        asyncio.run(_draft_all(state, targets, concurrency, on_item, close))
        run.counts = {"figures": report.figures, "drafted": report.drafted, "rejected": dict(report.rejected),
                      "skipped_existing": report.skipped_existing, "errors": report.errors,
                      "reasked": report.reasked, "retries": report.retries}
    report.error_items.sort(key=lambda item: (item.figure_id, item.kind))
    return report


async def _draft_all(state: _Run, targets: list[Target], concurrency: int,
                     on_item: Callable[[int, str], None] | None, close: bool) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(target: Target) -> None:
        async with gate:
            outcome = await _draft_figure(state, target)
        if on_item is not None:
            on_item(target.figure.id, outcome)

    try:
        await asyncio.gather(*(one(t) for t in targets))
    finally:
        if close:
            await state.backend.aclose()
    state.report.retries = getattr(state.backend, "retries", 0)


def _fail(state: _Run, fig: FigureRow, kind: DraftKind, key: str, reason: str) -> None:
    state.ws.db.write_retrying(lambda s: record_error(s, STAGE, key, fig.locator, reason, figure_id=fig.id,
                                                      run_id=state.run_id))
    state.report.errors += 1
    state.report.error_items.append(DraftFailure(figure_id=fig.id, kind=kind.key_part, reason=reason))


async def _draft_figure(state: _Run, target: Target) -> str:
    """Draft the figure's missing kinds one after another (so duplicate checks see the earlier ones)."""
    from zuhyo.images.prepare import prepare_image

    fig = target.figure
    pending = []
    for kind in target.kinds:
        key = draft_key(fig.id, kind, state.backend.spec, kind.prompt.version)
        if key in state.done:
            state.report.skipped_existing += 1
        else:
            pending.append((kind, key))
    if not pending:
        return "existing"
    path = state.ws.images.path_for(fig.sha256)
    try:
        if path is None:
            raise OSError(f"image {fig.sha256[:12]} is missing from the image store")
        data = await asyncio.to_thread(path.read_bytes)
        image = await asyncio.to_thread(prepare_image, data, max_pixels=state.backend.max_image_pixels,
                                        label=f"figure {fig.id}")
    except Exception as e:  # noqa: BLE001 - ImageError, OSError: the figure's error, the stage goes on
        for kind, key in pending:
            _fail(state, fig, kind, key, f"image: {e}")
        return "error"
    outcomes = [await _draft_one(state, target, kind, key, image) for kind, key in pending]
    return "error" if "error" in outcomes else "drafted"


async def _draft_one(state: _Run, target: Target, kind: DraftKind, key: str, image: PreparedImage) -> str:
    from zuhyo.evaluate.judges.validated_reply import ask_validated
    from zuhyo.models.base import ModelError

    fig = target.figure
    form_failure: list[tuple[BaseModel, str, str, str]] = []

    def parse(text: str) -> tuple[BaseModel | None, str]:
        reply, problem = parse_json_reply(kind.reply_model, text)
        if reply is None:
            return None, problem
        problem = kind.check(reply) if kind.check else ""
        if problem:
            return None, problem
        form = form_reason(kind, reply.question, reply.answer)  # type: ignore[attr-defined]
        if form:
            form_failure[:] = [(reply, text, *form)]
            return None, f"{form[1]}; HakushoBench §3.2 asks for short-answer questions"
        return reply, ""

    prompt = kind.render(caption=(fig.caption or "(no caption)").strip(), context=target.context,
                         domain=state.domain)
    try:
        result = await ask_validated(state.backend, prompt, parse, instruction=schema_instruction(
            kind.reply_model.model_json_schema()), attempts=ATTEMPTS, image=image, config=state.config[kind.key_part])
    except ModelError as e:
        _fail(state, fig, kind, key, f"model call failed: {e}")
        return "error"
    reply, reject = result.value, None
    if reply is None:
        if not (form_failure and form_failure[0][1] == result.text):
            _fail(state, fig, kind, key, f"no valid reply {result.failure(ATTEMPTS)}")
            return "error"
        reply, _, reject_kind, reason = form_failure[0]
        reject = (reject_kind, reason)
    state.report.reasked += bool(result.problems)
    fields = _item_fields(kind, reply)
    meta = {"attempts": len(result.problems) + (result.value is not None), "problems": result.problems,
            "figure_sha256": fig.sha256}
    if target.context and kind.abstract_only:
        meta["context_chars"] = len(target.context)

    def write(s: Session) -> str:
        rejection = reject or _leak_or_duplicate(s, fig.id, key, fields["question"], fields["answer"])
        row, created = add_qa_item(
            s, item_key=key, figure_id=fig.id, origin="draft", status="rejected" if rejection else "draft",
            actor=ACTOR, reason=rejection[1] if rejection else None, style=kind.style, category=kind.category,
            aspect=kind.aspect.value if kind.aspect else None, model=state.backend.spec,
            prompt_version=kind.prompt.version, raw=result.text, run_id=state.run_id,
            meta={**meta, "reject_kind": rejection[0]} if rejection else meta, **fields)
        resolve_error(s, STAGE, key)
        if not created:
            return "existing"
        return f"rejected:{rejection[0]}" if rejection else "drafted"

    outcome = state.ws.db.write_retrying(write)  # synchronous: no other draft's check-then-add interleaves
    if outcome == "existing":
        state.report.skipped_existing += 1
    elif outcome == "drafted":
        state.report.drafted += 1
    else:
        reason_kind = outcome.split(":", 1)[1]
        state.report.rejected[reason_kind] = state.report.rejected.get(reason_kind, 0) + 1
    return "drafted"


def _leak_or_duplicate(s: Session, figure_id: int, key: str, question: str, answer: str) -> tuple[str, str] | None:
    reason = leak_reason(question, answer)
    if reason:
        return "leak", reason
    others = [(item_id, text) for item_id, text in s.execute(select(QAItemRow.id, QAItemRow.question).where(
        QAItemRow.figure_id == figure_id, QAItemRow.status != "rejected", QAItemRow.item_key != key)
        .order_by(QAItemRow.id))]
    reason = duplicate_reason(question, others)
    return ("duplicate", reason) if reason else None


def _item_fields(kind: DraftKind, reply: Any) -> dict[str, Any]:
    """The qa_items columns a validated reply fills."""
    fields: dict[str, Any] = {"question": reply.question, "answer": reply.answer, "answer_kind": kind.answer_kind}
    if hasattr(reply, "key_points"):
        fields["key_points"] = list(reply.key_points)
    axis = getattr(reply, "axis", None)
    if axis is not None:
        fields["axis"] = {"min": axis.min, "max": axis.max, "scale": axis.scale}
    if hasattr(reply, "difficulty"):
        fields["difficulty"] = [f.value for f in reply.difficulty]
    return fields
