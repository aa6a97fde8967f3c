"""LLM value extraction for AstroChart numeric items (DomainCQA Appendix G.1).

DomainCQA lets an LLM extract the numerical values of an answer ("an LLM extracts numerical values" for data
derivation; Algorithm 3 step 4, "Extract numerical values from both Reference and Prediction", for retrieval).
``astrochart:<model spec>`` does so for every numeric item with ``prompts/judges/astro_values.txt``: temperature 0,
the reply must be a JSON list of ``{"value": <number>, "unit": <str or null>}`` (bare numbers and numeric strings
such as ``"2.1e4 km/s"`` are accepted too).

Like the LLM judge (:mod:`zuhyo.evaluate.judges.llm`), through :func:`~zuhyo.evaluate.judges.validated_reply.
ask_validated`: a reply that does not validate is asked again, up to ``attempts`` times in all, with the previous
reply and what was wrong with it; a reply still unusable after that
makes the item **unscored** (excluded and counted, never 0); a failed model call raises, so the scoring stage
records a judge error and retries the item on the next run. The verdicts are cached by the scoring stage (judge id
and prompt version include this extractor's); within one judge, extractions are also kept by (question,
response), since they do not depend on the reference or the axis metadata.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from zuhyo.evaluate.judges.astro_units import UNIT, parse_unit
from zuhyo.evaluate.judges.numeric_values import Extraction, Quantity, find_quantities, prepare
from zuhyo.evaluate.judges.validated_reply import ask_validated
from zuhyo.models.base import ModelBackend
from zuhyo.prompts import load_prompt

PROMPT = "judges/astro_values"
INSTRUCTION = ('Reply with one JSON list and nothing else, of the form [{"value": <number>, "unit": "<unit>" or '
               "null}, ...] (an empty list when the answer gives no value).")


def _first_json_list(text: str) -> Any:
    fenced = re.search(r"```(?:json)?\s*(\[.*?\]|\{.*?\})\s*```", text, re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    for open_, close in (("[", "]"), ("{", "}")):
        start = text.find(open_)
        if start >= 0:
            candidates.append(text[start:text.rfind(close) + 1])
    for c in candidates:
        try:
            return json.loads(c)
        except ValueError:
            continue
    return None


def _quantity(item: Any) -> Quantity | str:
    """One list element as a Quantity, or what is wrong with it."""
    unit = None
    if isinstance(item, dict):
        if "value" not in item:
            return f"element {json.dumps(item)[:80]} has no 'value'"
        raw_unit = item.get("unit")
        if raw_unit is not None and not isinstance(raw_unit, str):
            return f"unit {raw_unit!r} is not a string"
        if raw_unit and re.fullmatch(UNIT, prepare(raw_unit).strip()):
            unit = parse_unit(prepare(raw_unit).strip())
        item = item["value"]
    if isinstance(item, bool) or item is None:
        return f"value {item!r} is not a number"
    if isinstance(item, (int, float)):
        return Quantity(float(item), unit) if math.isfinite(item) else f"value {item!r} is not finite"
    if isinstance(item, str):
        found = find_quantities(prepare(item), keep_line_wavelengths=True)
        if len(found) == 1:
            return Quantity(found[0].value, unit or found[0].unit)
        return f"value {item!r} is not one number"
    return f"value {item!r} is not a number"


def parse_values_reply(text: str) -> tuple[list[Quantity] | None, str]:
    """The values of an extraction reply, or None and what is wrong with it."""
    obj = _first_json_list(text)
    if isinstance(obj, dict) and isinstance(obj.get("values"), list):
        obj = obj["values"]
    if not isinstance(obj, list):
        return None, "no JSON list found"
    values: list[Quantity] = []
    for item in obj:
        q = _quantity(item)
        if isinstance(q, str):
            return None, q
        values.append(q)
    return values, ""


class LLMValueExtractor:
    """Extracts an answer's values with a model; validated, retried, kept per (question, response)."""

    def __init__(self, backend: ModelBackend, attempts: int = 3, max_tokens: int = 1024) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.backend = backend
        self.attempts = attempts
        self.max_tokens = max_tokens
        self.prompt = load_prompt(PROMPT)
        self.version = f"{self.prompt.name}-{self.prompt.version}"
        self._done: dict[tuple[str, str], Extraction] = {}

    async def extract(self, question: str, response: str) -> Extraction:
        """The values ``response`` gives as its answer; ``values`` is None when no reply validated."""
        key = (question, response)
        if key not in self._done:
            got = await ask_validated(self.backend, self.prompt.render(question=question, response=response),
                                      parse_values_reply, instruction=INSTRUCTION, attempts=self.attempts,
                                      max_tokens=self.max_tokens)
            if got.value is None:
                self._done[key] = Extraction(None, "llm", f"unparseable value-extraction reply "
                                                          f"{got.failure(self.attempts)}")
            else:
                listed = ", ".join(str(v) for v in got.value) or "none"
                self._done[key] = Extraction(tuple(got.value), "llm",
                                             f"values extracted by the LLM{got.note()}: {listed}")
        return self._done[key]
