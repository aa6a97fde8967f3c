"""The optional VLM chart/table-vs-not classifier (``--classifier llm:<model spec>``).

Each figure goes to the model with the prompt ``prompts/construct/chart_check.txt`` and its caption; the reply must be
JSON ``{"chart": true|false, "kind": "..."}``. A reply that is not (prose, a refusal, broken JSON) is asked again
up to :data:`ATTEMPTS` times in all and then recorded as the figure's error: a verdict is never guessed from
prose. Transport failures (HTTP 429/5xx, timeouts) are retried with the evaluation runner's backoff. Requests
run concurrently in the driver (the model server does the work, so the ``--executor`` does not apply).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from zuhyo.evaluate.config import RetryPolicy
from zuhyo.evaluate.runner import backoff_delay
from zuhyo.models.base import ChatRequest, GenerationConfig, ModelBackend, TransientModelError
from zuhyo.prompts import load_prompt

PROMPT = "construct/chart_check"
#: Replies asked for per figure before an invalid reply becomes an error.
ATTEMPTS = 3
CONCURRENCY = 8
_JSON = re.compile(r"\{.*\}", re.S)


@dataclass(frozen=True)
class Verdict:
    chart: bool
    kind: str
    reply: str


class InvalidReply(ValueError):
    """The model's reply is not the JSON the prompt asks for."""


def parse_reply(text: str) -> tuple[bool, str]:
    """``(chart, kind)`` from a reply holding one JSON object (a ```json fence is allowed); InvalidReply else."""
    m = _JSON.search(text)
    if m is None:
        raise InvalidReply(f"no JSON object in the reply: {text[:80]!r}")
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError as e:
        raise InvalidReply(f"reply JSON does not parse ({e.msg}): {text[:80]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("chart"), bool):
        raise InvalidReply(f"reply has no boolean \"chart\": {text[:80]!r}")
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind.strip():
        kind = "chart" if data["chart"] else "not a chart"
    return data["chart"], kind.strip()


async def _ask(backend: ModelBackend, data: bytes, caption: str, policy: RetryPolicy) -> Verdict:
    from zuhyo.images.prepare import prepare_image

    prompt = load_prompt(PROMPT)
    image = prepare_image(data, max_pixels=backend.max_image_pixels)
    request = ChatRequest(prompt=prompt.render(caption=caption or "(none)"), image=image,
                          config=GenerationConfig(temperature=0.0, max_tokens=200))
    invalid: list[str] = []
    transient = 0
    while True:
        try:
            reply = await backend.generate(request)
        except TransientModelError as e:
            transient += 1
            if transient > policy.max_retries:
                raise
            await asyncio.sleep(backoff_delay(transient, policy, e.retry_after))
            continue
        try:
            chart, kind = parse_reply(reply.text)
        except InvalidReply as e:
            invalid.append(str(e))
            if len(invalid) >= ATTEMPTS:
                raise InvalidReply(f"{ATTEMPTS} invalid replies; last: {e}") from None
            continue
        return Verdict(chart, kind, reply.text)


def classify_all(spec: str, items: list[tuple[int, bytes, str]], *,
                 on_done: Callable[[int, Verdict | Exception], None],
                 backend: ModelBackend | None = None, policy: RetryPolicy | None = None) -> None:
    """Ask the model about each ``(figure_id, image bytes, caption)``; ``on_done(figure_id, verdict or error)``
    is called in this thread as each one finishes (so the caller records it at once)."""
    from zuhyo.models.base import build_backend

    pol = policy or RetryPolicy(max_retries=3, base_delay_s=0.5, max_delay_s=10.0)

    async def main() -> None:
        be = backend or build_backend(spec)
        sem = asyncio.Semaphore(CONCURRENCY)

        async def one(fid: int, data: bytes, caption: str) -> None:
            async with sem:
                try:
                    result: Verdict | Exception = await _ask(be, data, caption, pol)
                except Exception as e:  # noqa: BLE001 - each figure's failure is recorded, the rest go on
                    result = e
            on_done(fid, result)

        try:
            await asyncio.gather(*(one(*it) for it in items))
        finally:
            await be.aclose()

    asyncio.run(main())
