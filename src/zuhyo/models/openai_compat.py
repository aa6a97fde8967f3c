"""`openai:<model>@<base_url>` — any OpenAI-compatible chat-completions endpoint, over aiohttp.

aiohttp is the chosen client (DESIGN.md, measured: ~0.75 ms client CPU per ~240 KB chart request vs ~6.5 ms for
httpx and ~8 ms for the openai SDK). Several base URLs for one model (``--endpoint``) are load-balanced by
least in-flight requests. The backend does not retry: it classifies failures as transient (429, 5xx, timeouts,
dropped connections, malformed bodies) or permanent, and the runner decides.

Replies are bounded, since the server is not zuhyo's: a body is read in chunks up to ``max_reply_bytes``
(``--model-option``, default 8 MiB; a larger Content-Length is refused before reading) and an over-long body is a
permanent error naming its size; a reply text longer than ``max_response_chars`` (default 200,000) is cut to it
with a marker saying so, and its ``finish_reason`` becomes ``length`` so the record's outcome is ``truncated``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from zuhyo.models.base import (
    MODEL_BACKENDS,
    BackendOptions,
    ChatRequest,
    ModelReply,
    PermanentModelError,
    TransientModelError,
    int_option,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_BODY_CACHE_SIZE = 256
"""Encoded bodies kept for reuse (~256 × a few hundred KB); oldest dropped first."""
_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529}
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
"""Largest reply body read (``max_reply_bytes``): ~100x a long chain-of-thought reply with usage and logprobs."""
DEFAULT_MAX_RESPONSE_CHARS = 200_000
"""Longest reply text kept (``max_response_chars``): ~10x what 8,192 tokens of text take."""
_ERROR_BODY_BYTES = 64 * 1024
"""Of an error reply (status other than 200) only this much is read: it is only quoted."""
_CHUNK = 64 * 1024


def parse_openai_spec(rest: str) -> tuple[str, str]:
    """``<model>@<base_url>`` → (model, base_url); the base URL defaults to OpenAI's."""
    model, sep, base = rest.rpartition("@")
    if not sep:
        model, base = rest, DEFAULT_BASE_URL
    if not model:
        raise PermanentModelError(f"model spec 'openai:{rest}' names no model (expected openai:<model>@<base_url>)")
    if not base.startswith(("http://", "https://")):
        raise PermanentModelError(f"model spec 'openai:{rest}': base URL {base!r} is not http(s)")
    return model, base.rstrip("/")


#: Stands in for the image's data URL while the rest of the body is JSON-encoded (see ``encode_body``).
_IMAGE_TOKEN = "__zuhyo_image_data_url__"


def build_messages(request: ChatRequest, image_url: str | None = None) -> list[dict[str, Any]]:
    """Chat messages: optional system, earlier turns (image attached to the first user turn), graded turn."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    if request.image is not None and image_url is None:
        image_url = request.image.data_url
    image_part = ({"type": "image_url", "image_url": {"url": image_url}}
                  if request.image is not None else None)
    first = True
    for turn in request.context:
        content: list[dict[str, Any]] = [image_part] if (first and image_part) else []
        content.append({"type": "text", "text": turn.question})
        messages.append({"role": "user", "content": content})
        messages.append({"role": "assistant", "content": turn.answer})
        first = False
    content = [image_part] if (first and image_part) else []
    content.append({"type": "text", "text": request.prompt})
    messages.append({"role": "user", "content": content})
    return messages


@dataclass
class _Endpoint:
    url: str
    in_flight: int = 0


class OpenAICompatBackend:
    """Chat completions over aiohttp; one connection pool per backend, shared by all endpoints."""

    is_baseline = False

    def __init__(self, spec: str, model: str, base_urls: list[str], options: BackendOptions) -> None:
        self.spec = spec
        self.model = model
        self.max_image_pixels = options.max_image_pixels
        self._endpoints = [_Endpoint(u.rstrip("/") + "/chat/completions") for u in base_urls]
        self._headers = {"Content-Type": "application/json"}
        if options.api_key:
            self._headers["Authorization"] = f"Bearer {options.api_key}"
        self._timeout_s = options.timeout_s
        self.max_reply_bytes = int_option(options, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES, 1024,
                                          backend="openai")
        self.max_response_chars = int_option(options, "max_response_chars", DEFAULT_MAX_RESPONSE_CHARS, 100,
                                             backend="openai")
        self._session: Any = None
        self._bodies: dict[int, tuple[ChatRequest, bytes]] = {}
        self._lock = asyncio.Lock()

    async def _get_session(self) -> Any:
        if self._session is None:
            async with self._lock:
                if self._session is None:
                    import aiohttp

                    self._session = aiohttp.ClientSession(
                        connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                        timeout=aiohttp.ClientTimeout(total=self._timeout_s),
                        headers=self._headers,
                    )
        return self._session

    def _pick_endpoint(self) -> _Endpoint:
        return min(self._endpoints, key=lambda e: e.in_flight)

    def payload(self, request: ChatRequest, image_url: str | None = None) -> dict[str, Any]:
        cfg = request.config
        body: dict[str, Any] = {
            "model": self.model,
            "messages": build_messages(request, image_url),
        }
        if cfg.temperature is not None:  # None: omitted (a model that takes no temperature)
            body["temperature"] = cfg.temperature
        if cfg.max_tokens is not None:
            body["max_tokens"] = cfg.max_tokens
        if cfg.seed is not None:
            body["seed"] = cfg.seed
        if request.want_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 20
        body.update(cfg.extra_body)
        return body

    def _body_for(self, request: ChatRequest) -> bytes:
        """The encoded body, reused when the same request object is sent again (repeated runs, retries)."""
        key = id(request)
        hit = self._bodies.get(key)
        if hit is not None and hit[0] is request:
            return hit[1]
        body = self.encode_body(request)
        if len(self._bodies) >= _BODY_CACHE_SIZE:
            self._bodies.pop(next(iter(self._bodies)))
        self._bodies[key] = (request, body)  # holding the request keeps its id from being reused
        return body

    def encode_body(self, request: ChatRequest) -> bytes:
        """The JSON body as bytes. The image's data URL (hundreds of KB of base64, already JSON-safe ASCII) is
        spliced in after encoding the small rest: JSON-encoding it per request cost ~1.4 ms of CPU, most of the
        client's time per request."""
        if request.image is None:
            return json.dumps(self.payload(request), ensure_ascii=False).encode("utf-8")
        head = json.dumps(self.payload(request, _IMAGE_TOKEN), ensure_ascii=False).encode("utf-8")
        parts = head.split(_IMAGE_TOKEN.encode("ascii"))
        return request.image.data_url.encode("ascii").join(parts)

    async def generate(self, request: ChatRequest) -> ModelReply:
        import aiohttp

        session = await self._get_session()
        body = self._body_for(request)
        ep = self._pick_endpoint()
        ep.in_flight += 1
        try:
            async with session.post(ep.url, data=body) as resp:
                status = resp.status
                retry_after = _retry_after(resp.headers.get("Retry-After"))
                raw, too_long = await read_capped(resp, self.max_reply_bytes if status == 200 else _ERROR_BODY_BYTES)
        except TimeoutError:
            raise TransientModelError(f"timeout after {self._timeout_s:g}s from {ep.url}") from None
        except aiohttp.ClientConnectorError as e:  # refused, unknown host: nothing listens there
            raise TransientModelError(f"connection error to {ep.url}: {type(e).__name__}: {e}",
                                      unreachable=ep.url) from None
        except aiohttp.ClientError as e:
            raise TransientModelError(f"connection error to {ep.url}: {type(e).__name__}: {e}") from None
        finally:
            ep.in_flight -= 1
        if status != 200:
            snippet = raw[:300].decode("utf-8", "replace")
            msg = f"HTTP {status} from {ep.url}: {snippet}"
            if status in _TRANSIENT_STATUS:
                raise TransientModelError(msg, retry_after=retry_after)
            raise PermanentModelError(msg)
        if too_long:
            raise PermanentModelError(f"reply from {ep.url} is too long: {too_long} (the limit is "
                                      f"max_reply_bytes={self.max_reply_bytes:,}; raise it with --model-option)")
        return cap_reply_text(parse_chat_completion(raw, ep.url), self.max_response_chars)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def read_capped(resp: Any, cap: int) -> tuple[bytes, str | None]:
    """The body of aiohttp response ``resp``, read in chunks up to ``cap`` bytes: (body, None), or (what was read,
    why it stopped) when the body is longer. A Content-Length over ``cap`` stops it before reading; either way
    the connection is closed rather than drained."""
    declared = resp.content_length
    if declared is not None and declared > cap:
        resp.close()
        return b"", f"Content-Length {declared:,} bytes"
    buf = bytearray()
    async for chunk in resp.content.iter_chunked(_CHUNK):
        buf += chunk
        if len(buf) > cap:
            resp.close()
            return bytes(buf[:cap]), f"more than {cap:,} bytes, no Content-Length (reading stopped at {len(buf):,})"
    return bytes(buf), None


def cap_reply_text(reply: ModelReply, max_chars: int) -> ModelReply:
    """``reply`` with its text cut to ``max_chars`` plus a marker saying how much was dropped (and the provider's
    finish_reason), and ``finish_reason="length"``; unchanged when short enough."""
    text = reply.text
    if len(text) <= max_chars:
        return reply
    reply.text = (f"{text[:max_chars]}\n[zuhyo: reply truncated to {max_chars:,} of {len(text):,} characters "
                  f"(max_response_chars); finish_reason was {reply.finish_reason}]")
    reply.finish_reason = "length"
    return reply


def parse_chat_completion(raw: bytes, where: str) -> ModelReply:
    """Parse a chat-completions body; a malformed body is transient (proxies and overloaded servers send them)."""
    try:
        doc = json.loads(raw)
        choice = doc["choices"][0]
        message = choice.get("message") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise TransientModelError(f"malformed reply body from {where}: {raw[:200]!r}") from None
    content = message.get("content")
    if isinstance(content, list):  # some providers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    finish = choice.get("finish_reason")
    if message.get("refusal"):
        finish = "refusal"
        content = content or str(message["refusal"])
    top: list[dict[str, float]] | None = None
    lp = choice.get("logprobs")
    if isinstance(lp, dict) and isinstance(lp.get("content"), list):
        top = []
        for tok in lp["content"]:
            alts = {a["token"]: float(a["logprob"]) for a in tok.get("top_logprobs") or [] if "token" in a}
            alts.setdefault(tok.get("token", ""), float(tok.get("logprob", 0.0)))
            top.append(alts)
    usage = {k: int(v) for k, v in (doc.get("usage") or {}).items() if isinstance(v, int)}
    return ModelReply(text=content or "", finish_reason=finish, usage=usage, top_logprobs=top)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from datetime import datetime
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - datetime.now(UTC)).total_seconds())


@MODEL_BACKENDS.register("openai", "OpenAI-compatible chat endpoint: openai:<model>@<base_url> (vLLM, SGLang, "
                         "Ollama, OpenAI, Gemini...); --endpoint adds load-balanced URLs")
def _build_openai(rest: str, options: BackendOptions) -> OpenAICompatBackend:
    model, base = parse_openai_spec(rest)
    urls = [base] + [u for u in options.endpoints if u.rstrip("/") != base]
    return OpenAICompatBackend(f"openai:{rest}", model, urls, options)
