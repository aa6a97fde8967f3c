"""A real OpenAI-compatible HTTP server for tests, benchmarks and offline dry runs.

It answers ``POST /v1/chat/completions`` from an answer key (question → reply), and can inject faults: 429 with
Retry-After, 500, slow replies, dropped connections and malformed bodies, each with a given probability per
request (seeded). ``reply_bytes`` pads every reply to that size (with ``reply_chunked``, streamed in chunks with
no Content-Length), for clients that must bound what they read. ``GET /stats`` reports what it saw. Run it
standalone::

    python -m zuhyo.testing.fake_openai --answers key.json --port 8000 --fail-rate 0.2

It is a stand-in for a model, not for HTTP: requests go over real sockets on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

FAULTS = ("429", "500", "slow", "drop", "malformed")
REFUSAL = "__REFUSAL__"
EMPTY = "__EMPTY__"
SLOW = "__SLOW__"
"""An answer that waits ``slow_s`` before replying (for client timeouts), then replies ``default_answer``."""


@dataclass
class ServerState:
    """Answer key, fault settings and counters."""

    answers: dict[str, str | list[str]] = field(default_factory=dict)
    """question → reply text (Direct); CoT prompts get reasoning + 'Answer: <reply>'. A list scripts the replies
    to successive requests for that question, its last item repeating."""
    blind_answers: dict[str, str | list[str]] = field(default_factory=dict)
    """question → reply to requests that carry no image (text-only probes); such requests fall back to
    ``answers`` for questions not listed here."""
    default_answer: str = "unknown"
    fail_rate: float = 0.0
    faults: tuple[str, ...] = FAULTS
    slow_s: float = 5.0
    latency_s: float = 0.0
    seed: int = 0
    reply_bytes: int = 0
    """Pad each reply's text to about this many bytes (0: no padding)."""
    reply_chunked: bool = False
    """Send padded replies with chunked transfer encoding (no Content-Length)."""
    bytes_out: int = 0
    """Reply body bytes handed to the socket."""
    requests: int = 0
    faults_injected: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    seen_questions: dict[str, int] = field(default_factory=dict)
    bytes_in: int = 0
    record_bodies: bool = False
    """Keep every parsed request body in ``bodies`` (tests assert on exactly what was sent)."""
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        # Longest questions first so a question that contains another is matched first.
        self._ordered = sorted(self.answers, key=len, reverse=True)
        self._ordered_blind = sorted(self.blind_answers, key=len, reverse=True)

    def lookup(self, text: str, blind: bool = False) -> tuple[str | None, str]:
        """The scripted reply to ``text``; ``blind`` (no image in the request) looks in ``blind_answers`` first."""
        keys = [(q, self.blind_answers) for q in self._ordered_blind] if blind else []
        for q, key in keys + [(q, self.answers) for q in self._ordered]:
            if q in text:
                answer = key[q]
                if isinstance(answer, list):
                    return q, answer.pop(0) if len(answer) > 1 else answer[0]
                return q, answer
        return None, self.default_answer

    def draw_fault(self) -> str | None:
        if self.fail_rate and self._rng.random() < self.fail_rate:
            return self._rng.choice(self.faults)
        return None


def _last_user_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages", [])):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _has_image(body: dict[str, Any]) -> bool:
    return any(isinstance(m.get("content"), list) and any(isinstance(p, dict) and p.get("type") == "image_url"
                                                          for p in m["content"])
               for m in body.get("messages", []))


def _is_cot(text: str) -> bool:
    return "Answer:" in text or "step-by-step" in text or "ステップバイステップ" in text or "step by step" in text


async def _stream(request: web.Request, body: bytes, state: ServerState) -> web.StreamResponse:
    """``body`` in 1 MiB chunks with chunked transfer encoding; stops quietly when the client goes away."""
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    step = 1024 * 1024
    try:
        for i in range(0, len(body), step):
            await resp.write(body[i:i + step])
            state.bytes_out += min(step, len(body) - i)
        await resp.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    return resp


def make_app(state: ServerState) -> web.Application:
    async def chat(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        state.requests += 1
        state.bytes_in += len(raw)
        state.in_flight += 1
        state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            fault = state.draw_fault()
            if fault:
                state.faults_injected[fault] = state.faults_injected.get(fault, 0) + 1
            if fault == "429":
                return web.json_response({"error": {"message": "rate limited"}}, status=429,
                                         headers={"Retry-After": "0"})
            if fault == "500":
                return web.json_response({"error": {"message": "internal error"}}, status=500)
            if fault == "slow":
                await asyncio.sleep(state.slow_s)
            if fault == "drop":
                assert request.transport is not None
                request.transport.close()
                raise asyncio.CancelledError  # connection gone; aiohttp drops the handler
            if fault == "malformed":
                return web.Response(body=b'{"choices": [ {"message": ', content_type="application/json")
            try:
                body = json.loads(raw)
            except ValueError:
                return web.json_response({"error": {"message": "bad json"}}, status=400)
            if state.record_bodies:
                state.bodies.append(body)
            if state.latency_s:
                await asyncio.sleep(state.latency_s)
            text = _last_user_text(body)
            question, answer = state.lookup(text, blind=not _has_image(body))
            if question is not None:
                state.seen_questions[question] = state.seen_questions.get(question, 0) + 1
            if answer == SLOW:
                await asyncio.sleep(state.slow_s)
                answer = state.default_answer
            reply = f"The chart shows the values.\nAnswer: {answer}" if _is_cot(text) else answer
            if state.reply_bytes > len(reply):
                reply += " " + "x" * (state.reply_bytes - len(reply) - 1)
            message: dict[str, Any] = {"role": "assistant", "content": reply}
            if answer == REFUSAL:  # an answer key can script a refusal or an empty reply
                message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
            elif answer == EMPTY:
                message = {"role": "assistant", "content": ""}
            doc: dict[str, Any] = {
                "id": f"chatcmpl-{state.requests}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(text), "completion_tokens": len(reply),
                          "total_tokens": len(text) + len(reply)},
            }
            if body.get("logprobs"):
                yes = answer.strip().lower() in ("yes", "はい")
                doc["choices"][0]["logprobs"] = {"content": [{"token": "Yes" if yes else "No", "logprob": -0.05,
                                                              "top_logprobs": [
                                                                  {"token": "Yes", "logprob": -0.05 if yes else -3.0},
                                                                  {"token": "No", "logprob": -3.0 if yes else -0.05}]}]}
            if state.reply_chunked:
                return await _stream(request, json.dumps(doc).encode("utf-8"), state)
            state.bytes_out += len(encoded := json.dumps(doc).encode("utf-8"))
            return web.Response(body=encoded, content_type="application/json")
        finally:
            state.in_flight -= 1

    async def stats(request: web.Request) -> web.Response:
        return web.json_response({"requests": state.requests, "faults": state.faults_injected,
                                  "max_in_flight": state.max_in_flight, "seen_questions": state.seen_questions,
                                  "bytes_in": state.bytes_in, "bytes_out": state.bytes_out})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/stats", stats)
    return app


class FakeOpenAIServer:
    """The server on 127.0.0.1 in a background thread (for in-process tests)."""

    def __init__(self, state: ServerState, port: int = 0) -> None:
        self.state = state
        self._port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        self._runner = web.AppRunner(make_app(self.state), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._runner is None:
            return
        runner, self._runner = self._runner, None
        asyncio.run_coroutine_threadsafe(runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answers", help="JSON file: {question: answer}")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--fail-rate", type=float, default=0.0)
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--slow-s", type=float, default=5.0)
    ap.add_argument("--latency-s", type=float, default=0.0)
    ap.add_argument("--default-answer", default="unknown")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reply-bytes", type=int, default=0, help="pad every reply to about this many bytes")
    ap.add_argument("--reply-chunked", action="store_true", help="stream padded replies with no Content-Length")
    args = ap.parse_args(argv)
    answers = json.load(open(args.answers, encoding="utf-8")) if args.answers else {}
    state = ServerState(answers=answers, default_answer=args.default_answer, fail_rate=args.fail_rate,
                        faults=tuple(args.faults.split(",")), slow_s=args.slow_s, latency_s=args.latency_s,
                        seed=args.seed, reply_bytes=args.reply_bytes, reply_chunked=args.reply_chunked)

    async def serve() -> None:
        runner = web.AppRunner(make_app(state), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(f"PORT {port}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
