"""``zuhyo abstracts``: each paper's *chart abstract*, chosen by several models and a majority vote.

DomainCQA §3.1 ("Charts for AQA pairs", and §4.1) selects, per paper, "the chart abstract, a highly informative
visualization that encapsulates the study's key findings", with a Chain-of-Thought (CoT) reasoning framework and
a Voting Schema (VoT): "the CoT process begins by extracting the caption of each chart, surrounding description,
and key textual sections (e.g., abstract and conclusion) ... the MLLM applies CoT reasoning to generate a concise
summary for each chart, as well as the summary of the entire paper. Finally, the best-matching chart is
identified by comparing the summary of each chart with the overall summary of the paper", and "multiple MLLMs
independently identify the chart abstract and only the one selected by a majority vote is retained".

Algorithm 2 ("CoT&VoT for chart selection in AQA pairs"), line by line, as implemented here:

- input (line 1): a paper P with charts C_1..C_N — a workspace document with its abstract text in
  ``documents.meta["abstract"]`` (written by ``zuhyo collect latex``) and at least 2 kept figures (a figure is
  kept unless its current filter decision is drop); other documents are skipped with the reason, and counted;
  models M_1..M_k — the ``--model`` specs, at least 2;
- line 3, for each model M_j: one request per (paper, model) (:func:`run_abstracts`);
- line 4, "extract abstract and conclusion, generate P_j": the abstract and ``meta["conclusion"]`` go into the
  prompt; the reply's ``paper_summary`` is P_j;
- lines 5-7, for each chart C_i, "extract caption/description, generate summary S_ij": the figure's caption and
  the paragraphs that cite it (``figures.context``) go into the prompt as chart ``C<i>``; the reply's
  ``charts[i].summary`` is S_ij;
- line 8, "compute relevance R_ij with P_j": ``charts[i].relevance``, an integer 0-10, with its ``reasoning``;
- line 10, "select chart C*_j with highest R_ij": the reply's ``choice``; a choice that is not among the charts
  of highest relevance, a chart not in the paper, or a reply that does not list every chart once is an invalid
  reply and asked again (:func:`check_reply`); when several charts share the highest relevance the model's
  choice among them stands;
- line 12, "identify C* by majority vote of {C*_j}": :func:`tally`.

Readings of points the paper leaves open (deviations named):

- the paper does not publish its prompt (Appendix C prints only the QA-generation prompts); ours is
  ``prompts/construct/abstract.txt`` (versioned). Lines 4-10 are asked in one request whose JSON reply runs in the
  algorithm's order (paper summary, then per-chart summary and relevance, then the choice), so the reasoning
  is a chain of thought the reply keeps; the paper does not say whether it asks once or once per chart;
- the models see text only (captions and citing text), as the algorithm's steps describe; the paper calls them
  MLLMs but never says the chart images are shown;
- long texts are cut (abstract and conclusion at :data:`MAX_SECTION_CHARS`, each chart's citing text at
  :data:`MAX_CONTEXT_CHARS`), with an ellipsis;
- "majority" is more than half of the k models asked: with two models (the paper's setting, Claude 3.5 and
  GPT-4o) both must agree. Several charts with the top count is a **tie**; one chart on top without more than
  half of the votes is **no majority**; no valid vote at all is **no votes**. None of these chooses a chart.

Storage: each model's vote is a row of ``abstract_votes`` (one per document, model and prompt version) with the
validated reply, P_j and the raw text: a re-run with the same models asks nothing again, another model adds
its vote beside the earlier ones. A (paper, model) with no valid reply after three replies (or a failed call,
after the retries of :class:`zuhyo.construct.asking.RetryingBackend`) keeps a vote row without a figure and with the
error, is an item error of stage ``abstracts`` and is asked again on the next run; it counts as a missing vote
(``null``). The vote's outcome is appended to ``abstract_outcomes`` when it differs from the paper's latest
one (:mod:`zuhyo.construct.qa.abstract_vote`). :func:`chart_abstracts` gives drafting the chosen chart of every paper
with a majority.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from sqlalchemy import select
from sqlalchemy.orm import Session

from zuhyo.construct.qa.abstract_vote import OUTCOMES, abstract_outcomes, chart_abstracts, record_outcome, tally
from zuhyo.construct.select.labelling import ATTEMPTS, parse_json_reply, schema_instruction
from zuhyo.construct.workspace import Workspace
from zuhyo.construct.workspace.qa_tables import AbstractVote
from zuhyo.construct.workspace.queries import dropped_figure_ids
from zuhyo.construct.workspace.records import record_error, resolve_error
from zuhyo.construct.workspace.tables import Document, FigureRow
from zuhyo.errors import DataError
from zuhyo.models.base import GenerationConfig, ModelBackend
from zuhyo.prompts import Prompt, load_prompt

__all__ = ["OUTCOMES", "AbstractsReport", "Paper", "abstract_outcomes", "chart_abstracts", "papers_to_vote",
           "parse_vote", "render_prompt", "run_abstracts", "tally"]

STAGE = "abstracts"
PROMPT_NAME = "construct/abstract"
#: A chart abstract is chosen among at least this many kept figures.
MIN_FIGURES = 2
#: Characters of the abstract and of the conclusion put into the prompt.
MAX_SECTION_CHARS = 6000
#: Characters of one chart's citing text put into the prompt.
MAX_CONTEXT_CHARS = 1500


@dataclass(frozen=True)
class Chart:
    """One chart C_i of a paper as the prompt shows it."""

    key: str
    """``C1`` .. ``CN`` in figure id order."""
    figure_id: int
    text: str


@dataclass(frozen=True)
class Paper:
    """A document to choose a chart abstract for."""

    document_id: int
    locator: str
    title: str
    abstract: str
    conclusion: str
    charts: tuple[Chart, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.charts)

    def figure_of(self, key: str) -> int:
        return next(c.figure_id for c in self.charts if c.key == key)

    @property
    def chart_map(self) -> dict[str, int]:
        """``{"C1": figure id, ...}``: what a vote was cast over (kept in ``abstract_votes.meta["charts"]``)."""
        return {c.key: c.figure_id for c in self.charts}


class PaperSkip(BaseModel):
    """A document no chart abstract is chosen for, and why."""

    document_id: int
    locator: str
    reason: str


class VoteFailure(BaseModel):
    """A (paper, model) without a valid vote."""

    document_id: int
    model: str
    reason: str


class PaperOutcome(BaseModel):
    """The vote for one paper in this run."""

    document_id: int
    locator: str
    outcome: str
    figure_id: int | None
    votes: dict[str, int | None]
    recorded: bool
    """True when appended to ``abstract_outcomes`` (it differs from the paper's latest outcome)."""


class AbstractsReport(BaseModel):
    """What one run of ``zuhyo abstracts`` did."""

    models: list[str]
    prompt_version: str
    papers: int = 0
    """Documents in the workspace."""
    votes: int = 0
    """Valid votes recorded in this run."""
    reused: int = 0
    """Votes already recorded for the same paper, model and prompt version (not asked again)."""
    outdated: int = 0
    """Recorded votes asked again because the paper's charts changed since (a figure dropped or added)."""
    majority: int = 0
    tie: int = 0
    no_majority: int = 0
    no_votes: int = 0
    recorded: int = 0
    """Outcomes appended (new or changed)."""
    skipped: int = 0
    errors: int = 0
    """(paper, model) pairs without a valid vote."""
    reasked: int = 0
    retries: int = 0
    outcomes: list[PaperOutcome] = Field(default_factory=list)
    skipped_items: list[PaperSkip] = Field(default_factory=list)
    error_items: list[VoteFailure] = Field(default_factory=list)


# --- the papers and their charts -------------------------------------------------------------------------------

def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _chart_text(key: str, fig: FigureRow, panels: Counter[str]) -> str:
    prov = fig.provenance or {}
    name = f"Figure {fig.figure_number}" if fig.figure_number else "an unnumbered figure"
    figure_key = prov.get("figure_key")
    if figure_key and panels[figure_key] > 1:
        name += f", panel {prov.get('subcaption') or prov.get('sub_index') or '?'}"
    lines = [f"{key}: {name}", f"Caption: {_clip(fig.caption or '(no caption)', MAX_SECTION_CHARS)}"]
    cited = [" ".join(c.split()) for c in fig.context or [] if c.strip()]
    if not cited:
        lines.append("Cited in: (no citing text found)")
    else:
        lines.append("Cited in:")
        budget = MAX_CONTEXT_CHARS
        for paragraph in cited:
            if budget <= 0:
                break
            lines.append(f"- {_clip(paragraph, budget)}")
            budget -= len(paragraph)
    return "\n".join(lines)


def papers_to_vote(ws: Workspace) -> tuple[list[Paper], list[PaperSkip], int]:
    """(papers with abstract text and at least :data:`MIN_FIGURES` kept figures, documents skipped with why,
    number of documents), in document id order; a paper's charts are its kept figures in id order."""
    with ws.db.read() as s:
        dropped = dropped_figure_ids(s)
        figures: dict[int, list[FigureRow]] = defaultdict(list)
        for fig in s.scalars(select(FigureRow).order_by(FigureRow.id)):
            if fig.id not in dropped:
                figures[fig.document_id].append(fig)
        papers: list[Paper] = []
        skipped: list[PaperSkip] = []
        documents = list(s.scalars(select(Document).order_by(Document.id)))
        # With a paper list (collect latex --papers --top-cited), only the top-cited papers (DomainCQA §4.2).
        ranked = any(isinstance((d.meta or {}).get("selection"), dict) and (d.meta or {})["selection"].get("rule")
                     for d in documents)
        for doc in documents:
            meta = doc.meta or {}
            abstract = str(meta.get("abstract") or "").strip()
            kept = figures.get(doc.id, [])
            selection = meta.get("selection")
            selection = selection if isinstance(selection, dict) else {}
            if ranked and not selection.get("top_cited"):
                skipped.append(PaperSkip(document_id=doc.id, locator=doc.locator,
                                         reason="not among the top-cited papers of its year (zuhyo collect latex "
                                                "--papers --top-cited; DomainCQA §4.2)"))
                continue
            if not abstract:
                skipped.append(PaperSkip(document_id=doc.id, locator=doc.locator,
                                          reason="no abstract text (documents.meta has none; zuhyo collect latex "
                                                 "stores it)"))
                continue
            if len(kept) < MIN_FIGURES:
                skipped.append(PaperSkip(document_id=doc.id, locator=doc.locator,
                                          reason=f"{len(kept)} kept figure{'' if len(kept) == 1 else 's'}; a chart "
                                                 f"abstract is chosen among at least {MIN_FIGURES}"))
                continue
            panels = Counter(str((f.provenance or {}).get("figure_key")) for f in kept)
            charts = tuple(Chart(key=f"C{i}", figure_id=f.id, text=_chart_text(f"C{i}", f, panels))
                           for i, f in enumerate(kept, 1))
            conclusion = str(meta.get("conclusion") or "").strip()
            papers.append(Paper(document_id=doc.id, locator=doc.locator, title=(doc.title or doc.locator).strip(),
                                abstract=_clip(abstract, MAX_SECTION_CHARS),
                                conclusion=_clip(conclusion, MAX_SECTION_CHARS) if conclusion
                                else "(no conclusion section found)", charts=charts))
    return papers, skipped, len(documents)


def render_prompt(prompt: Prompt, paper: Paper) -> str:
    return prompt.render(title=paper.title, abstract=paper.abstract, conclusion=paper.conclusion,
                         n=str(len(paper.charts)), charts="\n\n".join(c.text for c in paper.charts))


# --- the reply ----------------------------------------------------------------------------------------------------

@cache
def reply_model(n: int) -> type[BaseModel]:
    """The reply's JSON schema for a paper of ``n`` charts, chart names limited to C1..Cn (``extra="forbid"``)."""
    key = Literal[tuple(f"C{i}" for i in range(1, n + 1))]  # type: ignore[valid-type]
    entry = create_model("ChartRelevance", __config__=ConfigDict(extra="forbid"),
                         chart=(key, ...), summary=(str, ...), relevance=(int, Field(ge=0, le=10)),
                         reasoning=(str, ...))
    reply: type[BaseModel] = create_model(  # type: ignore[call-overload]
        "ChartAbstractReply", __config__=ConfigDict(extra="forbid"),
        paper_summary=(str, ...), charts=(list[entry], ...), choice=(key, ...))  # type: ignore[valid-type]
    return reply


def check_reply(reply: Any, keys: Sequence[str]) -> str:
    """The problem with a schema-valid reply (Algorithm 2 lines 5-10), or "": every chart listed once, and the
    choice among the charts of highest relevance."""
    listed = [c.chart for c in reply.charts]
    missing = [k for k in keys if k not in listed]
    if missing:
        return f"\"charts\" must list every chart once; missing {', '.join(missing)}"
    twice = sorted({k for k in listed if listed.count(k) > 1}, key=list(keys).index)
    if twice:
        return f"\"charts\" must list every chart once; listed more than once: {', '.join(twice)}"
    best = max(c.relevance for c in reply.charts)
    top = [c.chart for c in reply.charts if c.relevance == best]
    if reply.choice not in top:
        return (f"choice {reply.choice} is not a chart with the highest relevance ({', '.join(top)}, relevance "
                f"{best})")
    return ""


def parse_vote(text: str, keys: Sequence[str]) -> tuple[Any, str]:
    """(validated reply, "") or (None, problem); a choice naming no chart of the paper is named as such."""
    from zuhyo.evaluate.judges.llm import first_json_object

    obj = first_json_object(text)
    if obj is not None and isinstance(obj.get("choice"), str) and obj["choice"] not in keys:
        return None, (f"choice {obj['choice']!r} is not a chart of this paper (the charts are "
                      f"{keys[0]} to {keys[-1]})")
    reply, problem = parse_json_reply(reply_model(len(keys)), text)
    if reply is None:
        return None, problem
    problem = check_reply(reply, keys)
    return (None, problem) if problem else (reply, "")


def instruction(n: int) -> str:
    return (schema_instruction(reply_model(n).model_json_schema())
            + f" List each of C1 to C{n} once and choose a chart of highest relevance.")


# --- the stage ----------------------------------------------------------------------------------------------------

def _check_models(backends: Sequence[ModelBackend]) -> list[str]:
    specs = [b.spec for b in backends]
    if len(specs) < 2:
        raise DataError("chart abstracts need at least 2 models to vote (DomainCQA Algorithm 2): give --model "
                        "twice or more")
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:
        raise DataError(f"model {twice[0]} is given more than once; each model votes once")
    return specs


def run_abstracts(ws: Workspace, backends: Sequence[ModelBackend], *, concurrency: int = 8,
                  constrained: bool = True, max_tokens: int = 4096, close: bool = True,
                  on_start: Callable[[int], None] | None = None,
                  on_item: Callable[[str, str], None] | None = None) -> AbstractsReport:
    """Algorithm 2 over every paper of the workspace with the models of ``backends`` (at least 2).

    Votes already recorded for a (paper, model, prompt version) are reused, the rest asked (``concurrency``
    requests in flight in all); each paper's outcome is appended when it changed. ``on_item(paper, outcome)``
    per paper, outcome one of :data:`OUTCOMES`, or ``error`` when a model gave no valid vote. The backends are
    closed at the end unless ``close`` is False.
    """
    specs = _check_models(backends)
    prompt = load_prompt(PROMPT_NAME)
    report = AbstractsReport(models=specs, prompt_version=prompt.version)
    papers, report.skipped_items, report.papers = papers_to_vote(ws)
    report.skipped = len(report.skipped_items)
    with ws.db.read() as s:
        done = {(doc, model): (fid, dict((meta or {}).get("charts") or {})) for doc, model, fid, meta in s.execute(
            select(AbstractVote.document_id, AbstractVote.model, AbstractVote.figure_id, AbstractVote.meta).where(
                AbstractVote.prompt_version == prompt.version, AbstractVote.model.in_(specs),
                AbstractVote.figure_id.is_not(None), AbstractVote.error.is_(None))) if fid is not None}
    if on_start is not None:
        on_start(len(papers))
    params = {"models": specs, "prompt": PROMPT_NAME, "prompt_version": prompt.version, "constrained": constrained}
    with ws.run(STAGE, params, lock=True) as run:
        asyncio.run(_vote_all(ws, papers, backends, prompt, done, run.id, report, concurrency=concurrency,
                              constrained=constrained, max_tokens=max_tokens, on_item=on_item, close=close))
        run.counts = report.model_dump(include={"papers", "votes", "reused", "outdated", "majority", "tie",
                                                "no_majority", "no_votes", "recorded", "skipped", "errors",
                                                "reasked", "retries"})
    return report


async def _vote_all(ws: Workspace, papers: list[Paper], backends: Sequence[ModelBackend], prompt: Prompt,
                    done: dict[tuple[int, str], tuple[int, dict[str, int]]], run_id: int, report: AbstractsReport,
                    *, concurrency: int, constrained: bool, max_tokens: int, on_item: Callable[[str, str], None] | None,
                    close: bool) -> None:
    from zuhyo.evaluate.judges.validated_reply import ask_validated
    from zuhyo.models.base import ModelError

    gate = asyncio.Semaphore(concurrency)

    def config(n: int) -> GenerationConfig:
        schema = reply_model(n).model_json_schema()
        extra = {"response_format": {"type": "json_schema", "json_schema": {
            "name": "chart_abstract", "strict": True, "schema": schema}}} if constrained else {}
        return GenerationConfig(temperature=0.0, max_tokens=max_tokens, extra_body=extra)

    def store(paper: Paper, model: str, figure_id: int | None, *, reply: Any = None, raw: str | None = None,
              error: str | None = None, problems: list[str] | None = None) -> None:
        item_key = f"document/{paper.document_id}/{model}"

        def write(s: Session) -> None:
            row = s.scalar(select(AbstractVote).where(
                AbstractVote.document_id == paper.document_id, AbstractVote.model == model,
                AbstractVote.prompt_version == prompt.version))
            earlier: list[dict[str, Any]] = []
            if row is None:
                row = AbstractVote(document_id=paper.document_id, model=model, prompt_version=prompt.version)
                s.add(row)
            else:  # a vote cast over charts that have changed since is kept beside the new one
                earlier = list((row.meta or {}).get("earlier", []))
                if row.figure_id is not None:
                    earlier.append({"figure_id": row.figure_id, "charts": (row.meta or {}).get("charts"),
                                    "paper_summary": row.paper_summary, "reasoning": row.reasoning, "raw": row.raw,
                                    "run_id": row.run_id})
            row.figure_id, row.raw, row.error, row.run_id = figure_id, raw, error, run_id
            row.paper_summary = reply.paper_summary if reply is not None else None
            row.reasoning = reply.model_dump(mode="json") if reply is not None else {}
            row.meta = {"charts": paper.chart_map, "problems": problems or [], "earlier": earlier}
            if error is None:
                resolve_error(s, STAGE, item_key)
            else:
                record_error(s, STAGE, item_key, paper.locator, f"{model}: {error}", run_id=run_id)

        ws.db.write_retrying(write)

    async def vote(paper: Paper, backend: ModelBackend) -> int | None:
        recorded = done.get((paper.document_id, backend.spec))
        if recorded is not None and recorded[1] == paper.chart_map:
            report.reused += 1
            return recorded[0]
        report.outdated += recorded is not None
        keys = paper.keys
        result = None
        async with gate:
            try:
                result = await ask_validated(backend, render_prompt(prompt, paper),
                                             lambda text: parse_vote(text, keys), instruction=instruction(len(keys)),
                                             attempts=ATTEMPTS, config=config(len(keys)))
            except ModelError as e:
                failure = f"model call failed: {e}"
        if result is not None and result.value is not None:
            figure_id = paper.figure_of(result.value.choice)
            store(paper, backend.spec, figure_id, reply=result.value, raw=result.text, problems=result.problems)
            report.votes += 1
            report.reasked += bool(result.problems)
            return figure_id
        if result is not None:
            failure = f"no valid reply {result.failure(ATTEMPTS)}"
            store(paper, backend.spec, None, raw=result.text, error=failure, problems=result.problems)
        else:
            store(paper, backend.spec, None, error=failure)
        report.errors += 1
        report.error_items.append(VoteFailure(document_id=paper.document_id, model=backend.spec, reason=failure))
        return None

    async def one(paper: Paper) -> None:
        choices = await asyncio.gather(*(vote(paper, b) for b in backends))
        votes = {b.spec: fid for b, fid in zip(backends, choices, strict=True)}
        outcome, figure_id = tally(votes)
        recorded = ws.db.write_retrying(lambda s: record_outcome(
            s, paper.document_id, outcome, figure_id, votes, charts=paper.chart_map, prompt_version=prompt.version,
            run_id=run_id))
        setattr(report, outcome, getattr(report, outcome) + 1)
        report.recorded += recorded
        report.outcomes.append(PaperOutcome(document_id=paper.document_id, locator=paper.locator, outcome=outcome,
                                            figure_id=figure_id, votes=votes, recorded=recorded))
        if on_item is not None:
            on_item(paper.locator, "error" if None in choices else outcome)

    try:
        await asyncio.gather(*(one(p) for p in papers))
    finally:
        if close:
            for b in backends:
                await b.aclose()
    report.retries = sum(getattr(b, "retries", 0) for b in backends)
    report.outcomes.sort(key=lambda o: o.document_id)
    order = {b.spec: i for i, b in enumerate(backends)}
    report.error_items.sort(key=lambda e: (e.document_id, order[e.model]))
