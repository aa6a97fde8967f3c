"""The one async protocol every model backend implements, its registry and spec parsing.

Backends know nothing of the runner: they turn one :class:`ChatRequest` into one :class:`ModelReply`, raising
:class:`TransientModelError` for failures worth retrying (429, 5xx, timeouts, dropped connections) and
:class:`PermanentModelError` for the rest. Retries, concurrency and bookkeeping belong to the runner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from zuhyo.errors import ModelError, ZuhyoError
from zuhyo.registry import Registry
from zuhyo.schema import Turn


@dataclass(frozen=True)
class PreparedImage:
    """An image decoded, resized to the backend's limit and re-encoded once per sample."""

    data: bytes
    """Encoded bytes (PNG or JPEG)."""
    mime: str
    """MIME type of ``data``."""
    width: int
    height: int
    sha256: str
    """SHA-256 of the original (source) file, to tie the request to the sample's image."""
    data_url: str = ""
    """``data:<mime>;base64,...`` — computed once, reused by every request for the sample."""


@dataclass(frozen=True)
class GenerationConfig:
    """Sampling settings (HakushoBench protocol: temperature 0, 8,192 max tokens).

    ``None`` for ``temperature`` or ``max_tokens`` means *omit*: the request carries no such key and the provider's
    default applies (HakushoBench §5.1: GPT-5.1 takes no temperature)."""

    temperature: float | None = 0.0
    max_tokens: int | None = 8192
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Passed through to the provider as-is (e.g. {"reasoning_effort": "low"})."""


@dataclass(frozen=True)
class ChatRequest:
    """One question to a model about one image."""

    prompt: str
    """The user text of the graded turn (template already applied)."""
    image: PreparedImage | None
    context: tuple[Turn, ...] = ()
    """Earlier turns (multi-turn benchmarks), sent before the graded turn."""
    system: str | None = None
    config: GenerationConfig = field(default_factory=GenerationConfig)
    want_logprobs: bool = False
    """Ask for token log-probabilities (L3Score)."""
    ocr_text: str | None = None
    """OCR text of the image, for the `cot+ocr` prompt option and the `ocr` baseline."""


@dataclass
class ModelReply:
    """What a backend returned."""

    text: str
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    top_logprobs: list[dict[str, float]] | None = None
    """Per generated token: {token: logprob} of the top alternatives (when requested and supported)."""


class TransientModelError(ModelError):
    """A failure that a retry may fix (HTTP 429/5xx, timeout, connection reset)."""

    def __init__(self, message: str, retry_after: float | None = None, unreachable: str | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.unreachable = unreachable
        """The endpoint's URL when no connection could be made at all (refused, unknown host); else None."""


class EndpointUnreachableError(ZuhyoError):
    """An endpoint refused :attr:`ConnectionBreaker.limit` connections in a row: the whole stage or evaluation
    stops with one message, instead of retrying every item against a server that is not there. Not a
    :class:`ModelError`, so no per-item handler records it as one item's error."""


class ConnectionBreaker:
    """Counts connection failures in a row (no reply of any kind in between) per endpoint; the ``limit``-th
    raises :class:`EndpointUnreachableError` naming the endpoint and the last failure."""

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self._streak: dict[str, int] = {}
        self.tripped: EndpointUnreachableError | None = None
        """The error once raised: later requests stop at :meth:`check` instead of trying again."""

    def check(self) -> None:
        """Raise the error again once the breaker has tripped (no new request to a dead endpoint)."""
        if self.tripped is not None:
            raise self.tripped

    def failed(self, error: TransientModelError) -> None:
        """Count ``error`` when it is a failure to connect; raise once an endpoint reaches the limit."""
        url = error.unreachable
        if url is None:  # HTTP 429/5xx, a dropped connection: the server is there
            self.answered()
            return
        if self.limit < 1:
            return
        self._streak[url] = self._streak.get(url, 0) + 1
        if self._streak[url] >= self.limit:
            self.tripped = EndpointUnreachableError(
                f"cannot reach {url}: {self._streak[url]} connection attempts in a row failed ({error}); is the "
                "server running at that address? Check the model spec's URL, then re-run (finished items are kept)")
            raise self.tripped

    def answered(self) -> None:
        """A reply came (any reply, even an HTTP error): the endpoints are reachable."""
        self._streak.clear()


class PermanentModelError(ModelError):
    """A failure no retry fixes (HTTP 400/401/404, malformed reply body after all retries)."""


@runtime_checkable
class ModelBackend(Protocol):
    """An async chat model."""

    spec: str
    """The model spec string it was built from (recorded in predictions)."""
    max_image_pixels: int | None
    """Images are resized to at most this many pixels before encoding (None: no limit)."""
    is_baseline: bool
    """True for floors such as the OCR baseline (reports label them)."""

    async def generate(self, request: ChatRequest) -> ModelReply: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class BackendOptions:
    """Options common to all backends, from the CLI."""

    endpoints: tuple[str, ...] = ()
    """Extra base URLs for the same model (load-balanced)."""
    api_key: str | None = None
    timeout_s: float = 300.0
    max_image_pixels: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def int_option(options: BackendOptions, name: str, default: int, minimum: int, *, backend: str) -> int:
    """Integer backend option ``name`` from ``--model-option`` (default when absent); PermanentModelError when it
    is not an integer or is below ``minimum``."""
    raw = options.extra.get(name, default)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise PermanentModelError(f"{backend} backend option {name}={raw!r} is not an integer") from None
    if value < minimum:
        raise PermanentModelError(f"{backend} backend option {name}={value} must be at least {minimum}")
    return value


BackendFactory = Callable[[str, BackendOptions], ModelBackend]
"""Builds a backend from the part of the spec after ``<kind>:`` and the options."""

MODEL_BACKENDS: Registry[BackendFactory] = Registry("model backend")


def build_backend(spec: str, options: BackendOptions | None = None) -> ModelBackend:
    """``openai:<model>@<base_url>`` | ``hf:<local path>`` | ``ocr`` → a backend."""
    from zuhyo.models import ensure_registered

    ensure_registered()
    kind, _, rest = spec.partition(":")
    return MODEL_BACKENDS.get(kind)(rest, options or BackendOptions())
