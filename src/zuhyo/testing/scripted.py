"""A scripted model backend: every provider is mockable without a server.

``ScriptedBackend("reply 1", ModelReply(...), TransientModelError("HTTP 503"))`` answers each request with the
next item in turn (a string becomes a plain reply, an exception is raised) and records the requests, so judges
and pipelines can be tested offline against exact model behaviour.
"""

from __future__ import annotations

from zuhyo.models.base import ChatRequest, ModelReply


class ScriptedBackend:
    """Implements :class:`zuhyo.models.base.ModelBackend` from a list of scripted replies."""

    def __init__(self, *replies: str | ModelReply | Exception, spec: str = "fake:scripted",
                 is_baseline: bool = False) -> None:
        self.spec = spec
        self.max_image_pixels: int | None = None
        self.is_baseline = is_baseline
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []
        self.closed = False

    async def generate(self, request: ChatRequest) -> ModelReply:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"{self.spec}: no scripted reply left for request {len(self.requests)}")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, ModelReply) else ModelReply(text=reply)

    async def aclose(self) -> None:
        self.closed = True
