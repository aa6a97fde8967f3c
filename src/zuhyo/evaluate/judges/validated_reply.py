"""Ask a judge model for a reply that must validate, re-asking with what was wrong (AstroChart's LLM steps).

Temperature 0. A reply that ``parse`` rejects (it returns None and the problem) is followed by one more turn that
shows the model its previous reply and the problem, up to ``attempts`` replies in all; the caller turns a reply
that never validated into an *unscored* item (never a wrong answer). A failed model call raises, as for every
judge: the scoring stage records a judge error and retries the item on the next run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from zuhyo.evaluate.judges.llm import RAW_REPLY_LIMIT
from zuhyo.models.base import ChatRequest, GenerationConfig, ModelBackend, PreparedImage
from zuhyo.schema import Turn

T = TypeVar("T")

RETRY_PROMPT = "Your reply could not be used: {problem}. {instruction}"


@dataclass
class Validated(Generic[T]):
    """The parsed reply (None when no reply validated), the last raw reply and the problems met on the way."""

    value: T | None
    text: str = ""
    problems: list[str] = field(default_factory=list)

    def note(self) -> str:
        """`` (after N unusable replies)`` when there were retries, else empty."""
        n = len(self.problems)
        return f" (after {n} unusable repl{'y' if n == 1 else 'ies'})" if n and self.value is not None else ""

    def failure(self, attempts: int) -> str:
        """Why no reply was usable, with the last reply (for the unscored verdict's reason)."""
        return f"after {attempts} attempt(s): {self.problems[-1] if self.problems else 'no reply'}"


async def ask_validated(backend: ModelBackend, prompt: str, parse: Callable[[str], tuple[T | None, str]], *,
                        instruction: str, attempts: int = 3, max_tokens: int = 1024,
                        image: PreparedImage | None = None, config: GenerationConfig | None = None) -> Validated[T]:
    """Ask ``prompt``; re-ask (with ``instruction`` on the expected form) until ``parse`` accepts a reply.

    ``image`` goes with every request (backends attach it to the first user turn); ``config`` replaces the
    default temperature-0 settings (e.g. to pass a ``response_format`` in ``extra_body``).
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    if config is None:
        config = GenerationConfig(temperature=0.0, max_tokens=max_tokens)
    request = ChatRequest(prompt=prompt, image=image, config=config)
    result: Validated[T] = Validated(None)
    for _ in range(attempts):
        reply = await backend.generate(request)
        result.text = reply.text
        value, problem = parse(reply.text)
        if value is not None:
            result.value = value
            return result
        result.problems.append(f"{problem}: {reply.text[:RAW_REPLY_LIMIT]}")
        request = ChatRequest(prompt=RETRY_PROMPT.format(problem=problem, instruction=instruction), image=image,
                              config=config, context=(*request.context, Turn(question=request.prompt,
                                                                               answer=reply.text)))
    return result
