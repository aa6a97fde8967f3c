"""The ``llm:<model spec>`` judge: a binary LLM judge in the HakushoBench style.

HakushoBench (arXiv 2606.01132) judges with an LLM whose instructions adapt the Humanity's Last Exam judge
(centerforaisafety/hle, ``run_judge_results.py``): extract the final answer from the response and compare it with
the reference, lenient on notation/script variants (2羽 vs 二羽), extra context, more specific answers,
synonyms, omitted non-essential information, spacing/case, and a small numeric margin. The reply has the HLE
fields ``extracted_final_answer``, ``reasoning``, ``correct`` (yes/no) and ``confidence``. The template is
``prompts/judges/hakusho_judge.txt`` (written from the published description; see
shared/data/notes/hakushobench_schema.md). Temperature 0. A reply without a readable ``correct`` field is
*unscored*: excluded from means and counted, never a wrong answer. Failed model calls raise (the scoring stage
records them as judge errors and retries them on the next run).
"""

from __future__ import annotations

import json
import re
from typing import Any

from zuhyo.evaluate.judges.base import JUDGES, JudgeInput, JudgeOptions, Verdict
from zuhyo.models.base import BackendOptions, ChatRequest, GenerationConfig, ModelBackend, build_backend
from zuhyo.prompts import Prompt, load_prompt

RAW_REPLY_LIMIT = 4000
"""Characters of an unparseable reply kept in the verdict's reason."""

_FIELD_CORRECT = re.compile(r"^[\s>*_#-]*correct[\s*_]*[:：][\s*_]*(yes|no|true|false)\b", re.IGNORECASE | re.MULTILINE)
_ANY_CORRECT = re.compile(r"(?<![a-z_])correct[\s*_]*[:：][\s*_]*(yes|no)\b", re.IGNORECASE)
_FIELD_EXTRACTED = re.compile(r"extracted_final_answer[\s*_]*[:：][\s*_]*(.*)", re.IGNORECASE)
_FIELD_REASONING = re.compile(r"reasoning[\s*_]*[:：]\s*(.*?)(?=^[\s*_#-]*correct[\s*_]*[:：]|\Z)",
                              re.IGNORECASE | re.DOTALL | re.MULTILINE)
_FIELD_CONFIDENCE = re.compile(r"confidence[\s*_]*[:：][\s*_]*(\d+(?:\.\d+)?)", re.IGNORECASE)


def format_references(references: tuple[str, ...] | list[str]) -> str:
    """One reference as is; several as a quoted list the judge may match any one of."""
    refs = list(dict.fromkeys(r.strip() for r in references if r.strip()))
    if len(refs) == 1:
        return refs[0]
    return "any one of these is correct: " + "; ".join(json.dumps(r, ensure_ascii=False) for r in refs)


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (bare, or inside a ```json fence), or None."""
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start:text.rfind("}") + 1])
    for c in candidates:
        try:
            obj = json.loads(c)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _yes_no(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        v = value.strip().strip("'\"*").lower()
        if v in ("yes", "true", "correct"):
            return True
        if v in ("no", "false", "incorrect"):
            return False
    return None


def parse_judge_reply(text: str, decided_by: str = "llm") -> Verdict:
    """Read an HLE-format judge reply (``field: value`` lines, or the same fields as JSON)."""
    obj = first_json_object(text)
    if obj is not None and "correct" in obj and _yes_no(obj["correct"]) is not None:
        correct = _yes_no(obj["correct"])
        extracted = obj.get("extracted_final_answer")
        reasoning = str(obj.get("reasoning", ""))
        confidence = obj.get("confidence")
    else:
        matches = list(_FIELD_CORRECT.finditer(text)) or list(_ANY_CORRECT.finditer(text))
        if not matches:
            return Verdict(verdict="unscored", reason=f"unparseable judge reply: {text[:RAW_REPLY_LIMIT]}",
                           decided_by=decided_by)
        correct = _yes_no(matches[-1].group(1))
        m = _FIELD_EXTRACTED.search(text)
        extracted = m.group(1).strip().strip("*").strip() if m else None
        m = _FIELD_REASONING.search(text)
        reasoning = m.group(1).strip() if m else ""
        m = _FIELD_CONFIDENCE.search(text)
        confidence = m.group(1) if m else None
    metrics: dict[str, float] = {}
    try:
        if confidence is not None:
            metrics["judge_confidence"] = float(str(confidence).rstrip("%"))
    except ValueError:
        pass
    return Verdict(verdict="correct" if correct else "incorrect", score=1.0 if correct else 0.0, reason=reasoning,
                   extracted_answer=None if extracted is None else str(extracted), decided_by=decided_by,
                   metrics=metrics)


class LLMJudge:
    """HakushoBench-style binary judge over an injected model backend."""

    def __init__(self, backend: ModelBackend, prompt: Prompt | None = None, max_tokens: int = 8192) -> None:
        self.backend = backend
        self.prompt = prompt or load_prompt("judges/hakusho_judge")
        self.max_tokens = max_tokens
        self.id = f"llm:{backend.spec}"
        self.prompt_version = f"{self.prompt.name}-{self.prompt.version}"

    def render(self, item: JudgeInput) -> str:
        """The judge prompt for one item (the full reply is judged: the judge extracts the answer itself)."""
        response = item.raw_response if item.raw_response is not None else item.response
        return self.prompt.render(question=item.question, response=response,
                                  correct_answer=format_references(item.references))

    async def judge(self, item: JudgeInput) -> Verdict:
        request = ChatRequest(prompt=self.render(item), image=None,
                              config=GenerationConfig(temperature=0.0, max_tokens=self.max_tokens))
        reply = await self.backend.generate(request)
        return parse_judge_reply(reply.text)

    async def aclose(self) -> None:
        await self.backend.aclose()


def backend_for_judge(kind: str, spec: str, options: JudgeOptions) -> ModelBackend:
    """Build the model backend named by ``<kind>:<model spec>``; a clear error when the spec is missing."""
    if not spec:
        raise ValueError(f"judge '{kind}' needs a model spec: {kind}:<model spec>, e.g. "
                         f"{kind}:openai:gpt-4o-mini@http://127.0.0.1:8000/v1")
    if spec.startswith("preset:"):  # e.g. llm:preset:gpt-5.1 — the judge of HakushoBench §5.1, no temperature
        import os

        from zuhyo.models.presets import preset_backend

        return preset_backend(spec, os.environ, BackendOptions(api_key=options.api_key, timeout_s=options.timeout_s))
    return build_backend(spec, BackendOptions(api_key=options.api_key, timeout_s=options.timeout_s))


@JUDGES.register("llm", "HakushoBench-style binary LLM judge (HLE-adapted prompt): llm:<model spec>; "
                        "unparseable reply → unscored")
def _build_llm(rest: str, options: JudgeOptions) -> LLMJudge:
    return LLMJudge(backend_for_judge("llm", rest, options),
                    max_tokens=int(options.extra.get("max_tokens", 8192)))
