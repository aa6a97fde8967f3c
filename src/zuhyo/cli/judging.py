"""`zuhyo judge`: judge one (question, reference, response) pair, or a JSONL file of whole samples."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, fail, result_console, results

if TYPE_CHECKING:
    from zuhyo.schema import Sample

_LINE_ONLY_FIELDS = ("reference", "references", "response", "prompt")
"""Keys of a JSONL line that are not :class:`~zuhyo.schema.Sample` fields."""
_PROMPT_STYLES = ("direct", "cot", "cot+ocr")


@dataclass(frozen=True)
class JudgeLine:
    """One line of ``zuhyo judge --input``: the reply, its prompt style and the sample it answers."""

    sample: Sample
    response: str
    prompt: str


def parse_pair_line(line: str, lineno: int = 1) -> JudgeLine:
    """A :class:`JudgeLine` from one JSONL line; ValueError naming the field at fault.

    A line holds ``question``, ``reference`` (str or list; ``references``/``answers`` also accepted),
    ``response``, optionally ``prompt`` (direct | cot | cot+ocr, default direct) and any other
    :class:`~zuhyo.schema.Sample` field (``benchmark``, ``id``, ``astro``, ``chartqapro``, ``charxiv``, ...), so
    benchmark-aware judges (``auto``, ``astrochart``, ``metric:chartqapro``) see the item's metadata. Keys that
    are neither are ignored (a file may carry its own columns, e.g. a human label).
    """
    from pydantic import ValidationError

    from zuhyo.schema import Sample

    try:
        obj = json.loads(line)
    except ValueError as e:
        raise ValueError(f"not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with question, reference, response")
    question = obj.get("question", "")
    if not isinstance(question, str):
        raise ValueError("field 'question' must be a string")
    ref_key = next((k for k in ("reference", "references", "answers") if k in obj), None)
    if ref_key is None:
        raise ValueError("missing field 'reference'")
    ref = obj[ref_key]
    refs = [ref] if isinstance(ref, str) else list(ref) if isinstance(ref, list) else None
    if not refs or not all(isinstance(r, str) for r in refs):
        raise ValueError(f"field '{ref_key}' must be a string or a non-empty list of strings")
    if "response" not in obj:
        raise ValueError("missing field 'response'")
    if not isinstance(obj["response"], str):
        raise ValueError("field 'response' must be a string")
    prompt = obj.get("prompt", "direct")
    if prompt not in _PROMPT_STYLES:
        raise ValueError(f"field 'prompt' must be one of {', '.join(_PROMPT_STYLES)}, got {prompt!r}")
    fields = {k: v for k, v in obj.items() if k in Sample.model_fields and k not in ("answers", "question")}
    fields.setdefault("id", f"line{lineno}")
    fields.setdefault("benchmark", "pairs")
    try:
        sample = Sample.model_validate({**fields, "question": question, "answers": refs})
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "sample"
        raise ValueError(f"field '{where}': {err['msg']}") from None
    return JudgeLine(sample=sample, response=obj["response"], prompt=prompt)


def _judge_input(jl: JudgeLine, answer_cleaning: str) -> tuple[Any, str]:
    from zuhyo.evaluate.judges.answer_extraction import scored_answer
    from zuhyo.evaluate.judges.base import JudgeInput
    from zuhyo.evaluate.prompting import prompt_family

    s = jl.sample
    answer = scored_answer(jl.response, jl.prompt, prompt_family(s), answer_cleaning)
    return JudgeInput(question=s.question, references=tuple(s.answers), response=answer,
                      raw_response=jl.response, sample=s), answer


async def _judge_line(judge: Any, jl: JudgeLine, answer_cleaning: str) -> dict[str, Any]:
    item, answer = _judge_input(jl, answer_cleaning)
    verdict = await judge.judge(item)
    return {"judge": judge.id, "answer": answer, **verdict.model_dump(mode="json")}


async def _judge_file(judge: Any, path: Path, concurrency: int, answer_cleaning: str) -> list[dict[str, Any]]:
    from zuhyo.errors import ModelError

    sem = asyncio.Semaphore(concurrency)

    async def one(lineno: int, line: str) -> dict[str, Any]:
        try:
            jl = parse_pair_line(line, lineno)
        except ValueError as e:
            return {"line": lineno, "error": f"{path}:{lineno}: {e}"}
        async with sem:
            try:
                row = await _judge_line(judge, jl, answer_cleaning)
            except ModelError as e:
                return {"line": lineno, "error": f"{path}:{lineno}: judge call failed: {e}"}
        return {"line": lineno, "id": jl.sample.id, **row}

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {path}: {e}")
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    try:
        return list(await asyncio.gather(*(one(i, ln) for i, ln in lines)))
    finally:
        await judge.aclose()


async def _judge_one(judge: Any, jl: JudgeLine, answer_cleaning: str) -> dict[str, Any]:
    try:
        return await _judge_line(judge, jl, answer_cleaning)
    finally:
        await judge.aclose()


def _row_text(row: dict[str, Any]) -> str:
    score = "" if row.get("score") is None else f" score {row['score']:.3g}"
    extracted = f" answer {row['extracted_answer']!r}" if row.get("extracted_answer") is not None else ""
    return f"[bold]{row['verdict']}[/] ({row['decided_by']}){score}{extracted} {row['reason']}"


def register(app: typer.Typer) -> None:
    @app.command("judge")
    def judge_cmd(
        question: Annotated[str | None, typer.Option("--question", help="The question.")] = None,
        reference: Annotated[list[str] | None, typer.Option("--reference", help="Reference answer (repeatable: "
                                                                                "correct if any matches).")] = None,
        response: Annotated[str | None, typer.Option("--response", help="The model's reply.")] = None,
        input_path: Annotated[Path | None, typer.Option(
            "--input", help="JSONL, one item a line: question, reference (str or list), response, optional prompt "
                            "(direct|cot|cot+ocr) and any Sample field (benchmark, astro, chartqapro, charxiv...).")
        ] = None,
        judge_spec: Annotated[str, typer.Option("--judge", help="Judge spec: rules, auto[:<model spec>], "
                                                                "llm:<model spec>, cascade:<model spec>, "
                                                                "metric:<name>, ...")] = "rules",
        prompt: Annotated[str, typer.Option("--prompt", help="Prompt style the reply answered: direct | cot | "
                                                             "cot+ocr (sets how the answer is read).")] = "direct",
        answer_cleaning: Annotated[str, typer.Option(
            "--answer-cleaning", help="faithful (what each benchmark's official scorer sees) | lenient "
                                      "(also strip Markdown, $, quotes, more answer markers).")] = "faithful",
        api_key_env: Annotated[str, typer.Option(
            "--api-key-env", help="Env var holding the judge model's API key (a local server needs none).")
        ] = "OPENAI_API_KEY",
        concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Judge calls in flight.")] = 8,
        json_out: JsonOpt = False,
    ) -> None:
        """Judge one pair (--question/--reference/--response) or every line of --input; prints the verdicts."""
        from zuhyo.errors import ModelError
        from zuhyo.evaluate.judges.answer_extraction import check_answer_cleaning
        from zuhyo.evaluate.judges.base import JudgeOptions, build_judge
        from zuhyo.registry import UnknownNameError

        pair_given = reference is not None or response is not None
        if input_path is not None and pair_given:
            fail("give either --input or --reference/--response, not both")
        if input_path is None and (not reference or response is None):
            fail("give --reference and --response (and --question), or --input pairs.jsonl")
        try:
            check_answer_cleaning(answer_cleaning)
        except ValueError as e:
            fail(f"--answer-cleaning: {e}")
        try:
            judge = build_judge(judge_spec, JudgeOptions(api_key=os.environ.get(api_key_env) or None))
        except (UnknownNameError, ValueError, ModelError) as e:
            fail(f"judge {judge_spec!r}: {e}")
        if input_path is not None:
            rows = asyncio.run(_judge_file(judge, input_path, concurrency, answer_cleaning))
            errors = [r for r in rows if "error" in r]
            for row in rows:
                if json_out:
                    emit_json(row)
                elif "error" in row:
                    console.print(f"[red]line {row['line']}: error:[/] {row['error']}", highlight=False)
                else:
                    result_console.print(f"line {row['line']}: " + _row_text(row), highlight=False)
            counts: dict[str, int] = {}
            for r in rows:
                counts[r.get("verdict", "error")] = counts.get(r.get("verdict", "error"), 0) + 1
            results(json_out).print(f"{len(rows)} items: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
                                    highlight=False)
            if errors:
                raise typer.Exit(1)
            return
        line = json.dumps({"question": question or "", "reference": list(reference or ()),
                           "response": response or "", "prompt": prompt})
        try:
            jl = parse_pair_line(line)
        except ValueError as e:
            fail(str(e))
        try:
            row = asyncio.run(_judge_one(judge, jl, answer_cleaning))
        except ModelError as e:
            fail(f"judge call failed: {e}")
        if json_out:
            emit_json(row)
            return
        typer.echo(f"{row['verdict']} ({row['decided_by']})" + (f": {row['reason']}" if row["reason"] else ""))
        if row.get("extracted_answer") is not None:
            typer.echo(f"extracted answer: {row['extracted_answer']}")
        for k, v in row["metrics"].items():
            typer.echo(f"{k}: {v:.4f}")
