"""`zuhyo judge`: judge one (question, reference, response) pair, or a JSONL file of them."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, console, emit_json, fail


def parse_pair_line(line: str) -> tuple[str, tuple[str, ...], str]:
    """(question, references, response) from one JSONL line; ValueError naming the field at fault."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise ValueError(f"not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with question, reference, response")
    question = obj.get("question", "")
    if not isinstance(question, str):
        raise ValueError("field 'question' must be a string")
    if "reference" not in obj and "references" not in obj:
        raise ValueError("missing field 'reference'")
    ref = obj["reference"] if "reference" in obj else obj["references"]
    refs = (ref,) if isinstance(ref, str) else tuple(ref) if isinstance(ref, list) else None
    if not refs or not all(isinstance(r, str) for r in refs):
        raise ValueError("field 'reference' must be a string or a non-empty list of strings")
    if "response" not in obj:
        raise ValueError("missing field 'response'")
    if not isinstance(obj["response"], str):
        raise ValueError("field 'response' must be a string")
    return question, refs, obj["response"]


def _verdict_row(judge_id: str, verdict: Any) -> dict[str, Any]:
    return {"judge": judge_id, **verdict.model_dump(mode="json")}


async def _judge_file(judge: Any, path: Path, concurrency: int) -> list[dict[str, Any]]:
    from zuhyo.errors import ModelError
    from zuhyo.evaluate.judges.base import JudgeInput

    sem = asyncio.Semaphore(concurrency)

    async def one(lineno: int, line: str) -> dict[str, Any]:
        try:
            question, refs, response = parse_pair_line(line)
        except ValueError as e:
            return {"line": lineno, "error": f"{path}:{lineno}: {e}"}
        async with sem:
            try:
                verdict = await judge.judge(JudgeInput(question=question, references=refs, response=response))
            except ModelError as e:
                return {"line": lineno, "error": f"{path}:{lineno}: judge call failed: {e}"}
        return {"line": lineno, **_verdict_row(judge.id, verdict)}

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {path}: {e}")
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    try:
        return list(await asyncio.gather(*(one(i, ln) for i, ln in lines)))
    finally:
        await judge.aclose()


async def _judge_one(judge: Any, question: str, refs: tuple[str, ...], response: str) -> Any:
    from zuhyo.evaluate.judges.base import JudgeInput

    try:
        return await judge.judge(JudgeInput(question=question, references=refs, response=response))
    finally:
        await judge.aclose()


def register(app: typer.Typer) -> None:
    @app.command("judge")
    def judge_cmd(
        question: Annotated[str | None, typer.Option("--question", help="The question.")] = None,
        reference: Annotated[list[str] | None, typer.Option("--reference", help="Reference answer (repeatable: "
                                                                                "correct if any matches).")] = None,
        response: Annotated[str | None, typer.Option("--response", help="The model's reply.")] = None,
        input_path: Annotated[Path | None, typer.Option("--input", help="JSONL of {question, reference (str or "
                                                                        "list), response}, one pair a line.")] = None,
        judge_spec: Annotated[str, typer.Option("--judge", help="Judge spec: rules, llm:<model spec>, "
                                                                "cascade:<model spec>, metric:<name>, ...")] = "rules",
        api_key_env: Annotated[str, typer.Option(
            "--api-key-env", help="Env var holding the judge model's API key (a local server needs none).")
        ] = "OPENAI_API_KEY",
        concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Judge calls in flight.")] = 8,
        json_out: JsonOpt = False,
    ) -> None:
        """Judge one pair (--question/--reference/--response) or every line of --input; prints the verdicts."""
        from zuhyo.errors import ModelError
        from zuhyo.evaluate.judges.base import JudgeOptions, build_judge
        from zuhyo.registry import UnknownNameError

        pair_given = reference is not None or response is not None
        if input_path is not None and pair_given:
            fail("give either --input or --reference/--response, not both")
        if input_path is None and (not reference or response is None):
            fail("give --reference and --response (and --question), or --input pairs.jsonl")
        try:
            judge = build_judge(judge_spec, JudgeOptions(api_key=os.environ.get(api_key_env) or None))
        except (UnknownNameError, ValueError, ModelError) as e:
            fail(f"judge {judge_spec!r}: {e}")
        if input_path is not None:
            rows = asyncio.run(_judge_file(judge, input_path, concurrency))
            errors = [r for r in rows if "error" in r]
            for row in rows:
                if json_out:
                    emit_json(row)
                elif "error" in row:
                    console.print(f"[red]line {row['line']}: error:[/] {row['error']}", highlight=False)
                else:
                    console.print(f"line {row['line']}: [bold]{row['verdict']}[/] ({row['decided_by']}) "
                                  f"{row['reason']}", highlight=False)
            counts: dict[str, int] = {}
            for r in rows:
                counts[r.get("verdict", "error")] = counts.get(r.get("verdict", "error"), 0) + 1
            console.print(f"{len(rows)} pairs: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
                          highlight=False)
            if errors:
                raise typer.Exit(1)
            return
        try:
            verdict = asyncio.run(_judge_one(judge, question or "", tuple(reference or ()), response or ""))
        except ModelError as e:
            fail(f"judge call failed: {e}")
        if json_out:
            emit_json(_verdict_row(judge.id, verdict))
            return
        typer.echo(f"{verdict.verdict} ({verdict.decided_by})" + (f": {verdict.reason}" if verdict.reason else ""))
        if verdict.extracted_answer is not None:
            typer.echo(f"extracted answer: {verdict.extracted_answer}")
        for k, v in verdict.metrics.items():
            typer.echo(f"{k}: {v:.4f}")
