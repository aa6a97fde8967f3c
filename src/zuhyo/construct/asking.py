"""Model calls of the construction stages: a backend wrapper that retries what is worth retrying.

The stages ask one question per figure and validate the reply
(:func:`zuhyo.evaluate.judges.validated_reply.ask_validated`); this wrapper gives every call the evaluation
runner's treatment of failures: a per-request timeout, and HTTP 429/5xx, dropped connections and timeouts retried
with the runner's full-jitter backoff (a server's Retry-After wins). What still fails raises, and the stage records
it as that figure's error; an endpoint that refuses every connection stops the stage at once
(:class:`~zuhyo.models.base.ConnectionBreaker`).
"""

from __future__ import annotations

import asyncio

from zuhyo.evaluate.config import RetryPolicy
from zuhyo.evaluate.runner import backoff_delay
from zuhyo.models.base import (
    ChatRequest,
    ConnectionBreaker,
    ModelBackend,
    ModelReply,
    PermanentModelError,
    TransientModelError,
)


class RetryingBackend:
    """:class:`ModelBackend` around ``inner``: timeout per request, transient failures retried."""

    def __init__(self, inner: ModelBackend, policy: RetryPolicy, timeout_s: float = 300.0) -> None:
        self.inner = inner
        self.policy = policy
        self.timeout_s = timeout_s
        self.spec = inner.spec
        self.max_image_pixels = inner.max_image_pixels
        self.is_baseline = inner.is_baseline
        self.retries = 0
        """Retries made so far (all requests)."""
        self.breaker = ConnectionBreaker(policy.max_connection_failures)
        """Stops the stage (:class:`~zuhyo.models.base.EndpointUnreachableError`) when the endpoint cannot be
        reached, instead of retrying every figure against it."""

    async def generate(self, request: ChatRequest) -> ModelReply:
        attempt = 0
        while True:
            attempt += 1
            self.breaker.check()
            try:
                async with asyncio.timeout(self.timeout_s):
                    reply = await self.inner.generate(request)
                self.breaker.answered()
                return reply
            except PermanentModelError:
                self.breaker.answered()  # the server replied (HTTP 4xx ...): it is there
                raise
            except (TimeoutError, TransientModelError) as e:
                if isinstance(e, TransientModelError):
                    self.breaker.failed(e)
                if attempt > self.policy.max_retries:
                    if isinstance(e, TransientModelError):
                        raise
                    raise TransientModelError(f"timeout after {self.timeout_s:g}s "
                                              f"({attempt} attempt{'s' if attempt > 1 else ''})") from None
                self.retries += 1
                retry_after = e.retry_after if isinstance(e, TransientModelError) else None
                await asyncio.sleep(backoff_delay(attempt, self.policy, retry_after))

    async def aclose(self) -> None:
        await self.inner.aclose()
