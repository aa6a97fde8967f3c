"""`charxiv`: CharXiv (princeton-nlp/CharXiv, Wang et al. 2024) descriptive and reasoning questions.

Layout: the repository's ``data/`` files — ``descriptive_<split>.json``, ``reasoning_<split>.json``,
``image_metadata_<split>.json``, ``chart_types_<split>.json`` (also accepted with a ``data_`` prefix, as copied
flat) — under ``--path`` or ``--path``/data, and the figures as ``images/<figure_id>.jpg`` (``--option images=DIR``
to point elsewhere). Splits: ``val`` (default) and ``test`` (whose answers upstream withholds as null; such rows are
reported, not loaded).

Questions are built exactly as upstream builds the model queries (CharXiv ``src/descriptive_utils.py``
``descriptive_query_helper`` / ``build_descriptive_quries`` and ``src/reasoning_utils.py``
``build_reasoning_queries`` / ``get_number_instruction`` @ 7ebe88f):

- reasoning: ``REASONING_RESP_INST[inst_category].format(query)``; category 4 also gets the number instruction
  ("exact integer" or "a number with N decimal places", N counted from the reference answer);
- descriptive: one question per (figure, qid): ``DESCRIPTIVE_RESP_INST[qid].format(prefix)`` where the prefix is
  "For the current plot, " when ``subplot_loc[0] == 0``, "For the subplot at row r and column c, " for a grid
  location ``[r, c]``, "For <text>, " when ``subplot_loc`` is a string; Q18 and Q19 (layout and number of subplots)
  take no prefix.

Sample ids: ``reasoning/<figure_id>`` and ``descriptive/<figure_id>_<i>`` (``i`` = index of the question among the
figure's qids: upstream's response key ``f"{figure_id}_{i}"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zuhyo.benchmarks.base import BenchmarkSource, LoadResult, RowErrors, benchmark, read_json_file
from zuhyo.benchmarks.charxiv_prompts import DESCRIPTIVE_RESP_INST, REASONING_RESP_INST
from zuhyo.benchmarks.hf_source import check_options
from zuhyo.errors import DataError
from zuhyo.schema import CharXivMeta, ImageRef, Sample, SourceInfo

SPLITS = ("val", "test")
KINDS = ("both", "descriptive", "reasoning")


def get_number_instruction(answer: str) -> str:
    """The extra instruction of reasoning category 4 (CharXiv ``reasoning_utils.get_number_instruction``)."""
    base = answer.split(".")
    whole, decimal = base[0], None if len(base) == 1 else base[1]
    if whole is not None and decimal is None:
        return "* Your final answer must be an exact integer."
    return f"* Your final answer must be a number with {len(decimal or '')} decimal places."


def reasoning_question(query: str, inst_category: int, answer: str) -> str:
    """The model query of one reasoning item (CharXiv ``build_reasoning_queries``)."""
    if inst_category in (1, 2, 3):
        return REASONING_RESP_INST[inst_category].format(query)
    if inst_category == 4:
        return REASONING_RESP_INST[4].format(query, get_number_instruction(answer))
    raise ValueError(f"inst_category must be 1-4, got {inst_category}")


def descriptive_question(qid: int, subplot_loc: Any) -> str:
    """The model query of descriptive template ``qid`` for a subplot (CharXiv ``descriptive_query_helper``)."""
    if qid in (18, 19):  # layout questions are about the whole figure: no subplot prefix
        return DESCRIPTIVE_RESP_INST[qid]
    if isinstance(subplot_loc, list):
        if subplot_loc[0] == 0:
            prefix = "For the current plot, "
        else:
            prefix = f"For the subplot at row {subplot_loc[0]} and column {subplot_loc[1]}, "
    elif isinstance(subplot_loc, str):
        prefix = f"For {subplot_loc}, "
    else:
        raise ValueError(f"invalid subplot_loc: {subplot_loc!r}")
    return DESCRIPTIVE_RESP_INST[qid].format(prefix)


def _find(path: Path, stem: str, split: str) -> Path | None:
    for folder in (path, path / "data"):
        for name in (f"{stem}_{split}.json", f"data_{stem}_{split}.json"):
            if (folder / name).is_file():
                return folder / name
    return None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _valid_subplot_loc(loc: Any) -> bool:
    if isinstance(loc, str):
        return bool(loc.strip())
    return isinstance(loc, list) and len(loc) == 2 and all(_is_int(v) for v in loc)


def _figure_id(key: str, rec: Any, errors: RowErrors) -> int | None:
    fid = errors.require(rec, "figure_id", key, int)
    if fid is None:
        return None
    if isinstance(fid, bool):
        errors.add(key, "expected int, got bool", field="figure_id")
        return None
    if key != str(fid):
        errors.add(key, f"figure_id {fid} does not match the row key {key!r}", field="figure_id")
        return None
    return fid


class _FigureInfo:
    """Per-figure provenance from image_metadata_<split>.json and chart_types_<split>.json (both optional)."""

    def __init__(self, metadata: dict[str, Any], chart_types: dict[str, Any]) -> None:
        self.metadata = metadata
        self.chart_types = chart_types

    def subject(self, fid: int) -> str | None:
        m = self.metadata.get(str(fid))
        return m.get("category") if isinstance(m, dict) and isinstance(m.get("category"), str) else None

    def source(self, fid: int) -> SourceInfo | None:
        m = self.metadata.get(str(fid))
        if not isinstance(m, dict):
            return None
        pid, title, cap = (m.get(k) if isinstance(m.get(k), str) else None for k in ("paper_id", "title", "caption"))
        return SourceInfo(paper_id=pid, title=title, caption=cap, url=f"https://arxiv.org/abs/{pid}" if pid else None)

    def extra(self, fid: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        ct = self.chart_types.get(str(fid))
        if isinstance(ct, dict) and isinstance(ct.get("chart_types"), list):
            out["chart_types"] = ct["chart_types"]
        m = self.metadata.get(str(fid))
        if isinstance(m, dict) and isinstance(m.get("year"), str):
            out["year"] = m["year"]
        return out


def _rows(data: Any, path: Path, errors: RowErrors) -> list[tuple[str, Any]]:
    if data is None:
        return []
    if not isinstance(data, dict):
        errors.add(path.name, f"expected a JSON object keyed by figure id, got {type(data).__name__}")
        return []
    return list(data.items())


def read_reasoning(path: Path, split: str, info: _FigureInfo, errors: RowErrors) -> list[Sample]:
    """One sample per reasoning row (figure_id, query, answer, inst_category)."""
    samples: list[Sample] = []
    for key, rec in _rows(read_json_file(path, errors), path, errors):
        fid = _figure_id(key, rec, errors)
        query = errors.require(rec, "query", key) if fid is not None else None
        if fid is None or query is None:
            continue
        if rec.get("answer") is None:
            errors.add(key, "answer is null (CharXiv withholds test-split answers)", field="answer")
            continue
        answer = errors.require(rec, "answer", key)
        inst = errors.require(rec, "inst_category", key, int)
        if answer is None or inst is None:
            continue
        if isinstance(inst, bool) or inst not in (1, 2, 3, 4):
            errors.add(key, f"inst_category must be 1, 2, 3 or 4, got {inst!r}", field="inst_category")
            continue
        meta = CharXivMeta(kind="reasoning", figure_id=fid, inst_category=inst, subject=info.subject(fid))
        extra = {"raw_question": query, **info.extra(fid)}
        if "qa_source" in rec:
            extra["qa_source"] = rec["qa_source"]
        question = reasoning_question(query, inst, answer)
        samples.append(Sample(id=f"reasoning/{fid}", benchmark="charxiv", question=question, answers=[answer],
                              image=ImageRef(path=f"{fid}.jpg"),
                              split=split, charxiv=meta, source=info.source(fid), metadata=extra))
    return samples


def read_descriptive(path: Path, split: str, info: _FigureInfo, errors: RowErrors) -> list[Sample]:
    """One sample per (figure, qid) of the descriptive file."""
    samples: list[Sample] = []
    for key, rec in _rows(read_json_file(path, errors), path, errors):
        fid = _figure_id(key, rec, errors)
        if fid is None:
            continue
        qids = errors.require(rec, "qids", key, list)
        answers = errors.require(rec, "answers", key, list)
        nsub = errors.require(rec, "num_subplots", key, int)
        if qids is None or answers is None or nsub is None:
            continue
        loc = rec.get("subplot_loc")
        if not _valid_subplot_loc(loc):
            errors.add(key, f"expected [row, column] or a text location, got {loc!r}", field="subplot_loc")
            continue
        if len(qids) != len(answers):
            errors.add(key, f"{len(qids)} qids but {len(answers)} answers", field="answers")
            continue
        for i, (qid, answer) in enumerate(zip(qids, answers, strict=True)):
            if not _is_int(qid) or qid not in DESCRIPTIVE_RESP_INST:
                errors.add(key, f"descriptive template id must be 1-19, got {qid!r}", field=f"qids[{i}]")
                continue
            if answer is None:
                errors.add(key, "answer is null (CharXiv withholds test-split answers)", field=f"answers[{i}]")
                continue
            if not isinstance(answer, str):
                errors.add(key, f"expected str, got {type(answer).__name__}", field=f"answers[{i}]")
                continue
            meta = CharXivMeta(kind="descriptive", figure_id=fid, qid=qid, subplot_loc=loc, num_subplots=nsub,
                               subject=info.subject(fid))
            samples.append(Sample(id=f"descriptive/{fid}_{i}", benchmark="charxiv",
                                  question=descriptive_question(qid, loc), answers=[answer],
                                  image=ImageRef(path=f"{fid}.jpg"), split=split, charxiv=meta,
                                  source=info.source(fid), metadata={"subq_idx": i, **info.extra(fid)}))
    return samples


def _optional_table(path: Path, stem: str, split: str, errors: RowErrors) -> dict[str, Any]:
    f = _find(path, stem, split)
    if f is None:
        return {}
    data = read_json_file(f, errors)
    if data is not None and not isinstance(data, dict):
        errors.add(f.name, f"expected a JSON object keyed by figure id, got {type(data).__name__}")
        return {}
    return data or {}


@benchmark("charxiv", "CharXiv descriptive (one item per figure and template) and reasoning questions, "
                      "with upstream's response instructions; --option kind=descriptive|reasoning")
def load_charxiv(source: BenchmarkSource, strict: bool) -> LoadResult:
    """Load CharXiv from the repository's data files under ``--path``."""
    check_options(source, "charxiv", ("kind", "images"))
    if source.path is None:
        raise DataError("benchmark 'charxiv' needs --path (a CharXiv checkout or its data/ folder)")
    split = source.split or "val"
    if split not in SPLITS:
        raise DataError(f"charxiv: --split must be one of {', '.join(SPLITS)}, got {split!r}")
    kind = source.options.get("kind", "both")
    if kind not in KINDS:
        raise DataError(f"charxiv: option kind must be one of {', '.join(KINDS)}, got {kind!r}")
    path = source.path
    wanted = ("descriptive", "reasoning") if kind == "both" else (kind,)
    files = {k: _find(path, k, split) for k in wanted}
    absent = [f"{k}_{split}.json" for k, f in files.items() if f is None]
    if absent:
        raise DataError(f"charxiv: {path} lacks {', '.join(absent)} (looked in {path} and {path / 'data'})")
    errors = RowErrors("charxiv", strict)
    info = _FigureInfo(_optional_table(path, "image_metadata", split, errors),
                       _optional_table(path, "chart_types", split, errors))
    samples: list[Sample] = []
    if files.get("descriptive") is not None:
        samples += read_descriptive(files["descriptive"], split, info, errors)  # type: ignore[arg-type]
    if files.get("reasoning") is not None:
        samples += read_reasoning(files["reasoning"], split, info, errors)  # type: ignore[arg-type]
    if "images" in source.options:
        images = Path(source.options["images"])
    else:
        images = next((d for d in (path / "images", path.parent / "images") if d.is_dir()), path / "images")
    return LoadResult("charxiv", samples, errors.errors, base_dir=images)
