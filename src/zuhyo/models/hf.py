"""``hf:<local path>``: a transformers vision-language model from a local folder, batched greedy generation.

Requests that arrive together are gathered into micro-batches (up to ``batch_size``, default 8, waiting at most
``batch_wait_ms``, default 10 ms, for more) and generated in one worker thread, so the event loop stays free and
the model sees one batch at a time. Requests that cannot share one ``generate`` call (different sampling
settings, with/without an image) go in separate batches. Temperature 0 is greedy decoding (``do_sample=False``);
``max_tokens`` is ``max_new_tokens``. Nothing is downloaded: the folder must hold the weights, the config and the
processor files (``local_files_only=True``).

Backend options (``BackendOptions.extra``): ``batch_size``, ``batch_wait_ms``, ``device`` (``auto`` = CUDA when
available, else CPU), ``dtype`` (``auto`` = bfloat16 on CUDA, float32 on CPU; or ``float32``/``bfloat16``/
``float16``). torch and transformers are imported when a backend is built, never when this module is imported.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
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
from zuhyo.models.hf_inputs import build_messages, load_processor

_TOP_LOGPROBS = 5
DEFAULT_MAX_NEW_TOKENS = 8192
"""``max_new_tokens`` when the request omits ``max_tokens`` (``max_tokens=omit``): the papers' 8,192."""


def _int_option(options: BackendOptions, name: str, default: int, minimum: int) -> int:
    return int_option(options, name, default, minimum, backend="hf")


class MicroBatcher:
    """Collects concurrent submissions into batches and runs each batch in one worker thread.

    ``run_batch`` gets requests that share a ``key`` and returns one reply or exception per request, in order.
    """

    def __init__(
        self,
        run_batch: Callable[[list[ChatRequest]], list[ModelReply | BaseException]],
        key: Callable[[ChatRequest], Hashable],
        batch_size: int,
        wait_s: float,
    ) -> None:
        self._run_batch = run_batch
        self._key = key
        self.batch_size = batch_size
        self.wait_s = wait_s
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zuhyo-hf")
        self._queue: asyncio.Queue[tuple[ChatRequest, asyncio.Future[ModelReply]]] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    async def submit(self, request: ChatRequest) -> ModelReply:
        if self._closed:
            raise PermanentModelError("the hf backend is closed")
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._worker is None or self._worker.done():
            # a new event loop (or the first call): queues and tasks belong to one loop
            self._loop = loop
            self._queue = asyncio.Queue()
            self._worker = loop.create_task(self._work(self._queue))
        assert self._queue is not None
        fut: asyncio.Future[ModelReply] = loop.create_future()
        await self._queue.put((request, fut))
        return await fut

    async def _work(self, queue: asyncio.Queue[tuple[ChatRequest, asyncio.Future[ModelReply]]]) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await queue.get()]
            deadline = loop.time() + self.wait_s
            while len(batch) < self.batch_size:
                try:
                    batch.append(queue.get_nowait())
                    continue
                except asyncio.QueueEmpty:
                    pass
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(queue.get(), remaining))
                except TimeoutError:
                    break
            groups: dict[Hashable, list[tuple[ChatRequest, asyncio.Future[ModelReply]]]] = {}
            for req, fut in batch:
                if not fut.done():  # the runner may have given up on it (timeout → cancelled)
                    groups.setdefault(self._key(req), []).append((req, fut))
            for items in groups.values():
                try:
                    results = await loop.run_in_executor(self._executor, self._run_batch, [r for r, _ in items])
                except BaseException as e:  # the worker must survive anything one batch does
                    results = [e] * len(items)
                    if isinstance(e, asyncio.CancelledError):
                        raise
                for (_, fut), res in zip(items, results, strict=True):
                    if fut.done():
                        continue
                    if isinstance(res, BaseException):
                        fut.set_exception(res)
                    else:
                        fut.set_result(res)

    async def aclose(self) -> None:
        self._closed = True
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
        if self._queue is not None:
            while not self._queue.empty():
                _, fut = self._queue.get_nowait()
                if not fut.done():
                    fut.set_exception(PermanentModelError("the hf backend was closed before this request ran"))
        self._executor.shutdown(wait=True)


class HfBackend:
    """A local transformers image-text-to-text model behind the async backend protocol."""

    is_baseline = False

    def __init__(self, spec: str, folder: Path, options: BackendOptions) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, GenerationConfig

        self.spec = spec
        self.max_image_pixels = options.max_image_pixels
        self.folder = folder
        batch_size = _int_option(options, "batch_size", 8, 1)
        wait_s = _int_option(options, "batch_wait_ms", 10, 0) / 1000
        device = str(options.extra.get("device", "auto"))
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
        dtype_name = str(options.extra.get("dtype", "auto"))
        if dtype_name == "auto":
            self.dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        elif dtype_name in ("float32", "bfloat16", "float16"):
            self.dtype = getattr(torch, dtype_name)
        else:
            raise PermanentModelError(f"hf backend option dtype={dtype_name!r}: use auto, float32, bfloat16, float16")
        self.processor = load_processor(folder)
        model: Any  # typed loosely: transformers' decorated .to() confuses type checkers
        try:
            model = AutoModelForImageTextToText.from_pretrained(folder, local_files_only=True, dtype=self.dtype)
        except (OSError, ValueError, KeyError) as e:
            raise PermanentModelError(f"cannot load the model in {folder}: {e}") from None
        self.model: Any = model.to(self.device).eval()
        gen = getattr(self.model, "generation_config", None) or GenerationConfig()
        eos = gen.eos_token_id
        self.eos_ids: set[int] = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        tok = self.processor.tokenizer
        self.pad_id: int | None = tok.pad_token_id if tok.pad_token_id is not None else next(iter(self.eos_ids), None)
        self._batcher = MicroBatcher(
            self._run_batch,
            key=lambda r: (r.image is not None, r.config.temperature, r.config.max_tokens, r.config.seed),
            batch_size=batch_size,
            wait_s=wait_s,
        )

    async def generate(self, request: ChatRequest) -> ModelReply:
        """Queue the request for the next micro-batch and wait for its reply."""
        return await self._batcher.submit(request)

    async def aclose(self) -> None:
        """Stop the batch worker and release the model."""
        await self._batcher.aclose()
        self.model = None

    # --- worker thread -------------------------------------------------------------------------------------

    def _run_batch(self, requests: list[ChatRequest]) -> list[ModelReply | BaseException]:
        """Generate for one batch; if the batch fails, run its requests one by one so only the culprit fails."""
        try:
            return list(self._generate(requests))
        except Exception as e:
            if len(requests) == 1:
                return [_model_error(self.spec, e)]
        out: list[ModelReply | BaseException] = []
        for r in requests:
            try:
                out.extend(self._generate([r]))
            except Exception as e:
                out.append(_model_error(self.spec, e))
        return out

    def _generate(self, requests: list[ChatRequest]) -> list[ModelReply]:
        import torch

        if self.model is None:
            raise PermanentModelError("the hf backend is closed")
        texts = [
            self.processor.apply_chat_template(build_messages(r), add_generation_prompt=True, tokenize=False)
            for r in requests
        ]
        images = [[_decode_image(r)] for r in requests if r.image is not None]
        self.processor.tokenizer.padding_side = "left"  # generation continues from the right end of each row
        enc = self.processor(text=texts, images=images or None, return_tensors="pt", padding=True)
        enc = {k: (v.to(self.device) if hasattr(v, "to") else v) for k, v in enc.items()}
        for k in ("pixel_values", "pixel_values_videos"):
            if k in enc and enc[k].is_floating_point():
                enc[k] = enc[k].to(self.dtype)
        cfg = requests[0].config
        sampling: dict[str, Any] = (
            {"do_sample": True, "temperature": cfg.temperature}
            if cfg.temperature is not None and cfg.temperature > 0
            else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        )
        want_logprobs = any(r.want_logprobs for r in requests)
        with torch.inference_mode():
            if cfg.seed is not None:
                torch.manual_seed(cfg.seed)
            out = self.model.generate(
                **enc,
                max_new_tokens=cfg.max_tokens if cfg.max_tokens is not None else DEFAULT_MAX_NEW_TOKENS,
                pad_token_id=self.pad_id,
                return_dict_in_generate=True,
                output_logits=want_logprobs,
                **sampling,
            )
        prompt_len = enc["input_ids"].shape[1]
        new_tokens = out.sequences[:, prompt_len:].tolist()
        replies = []
        for i, (req, toks) in enumerate(zip(requests, new_tokens, strict=True)):
            end = next((j for j, t in enumerate(toks) if t in self.eos_ids), None)
            kept = toks[: end if end is not None else len(toks)]
            text = self.processor.tokenizer.decode(kept, skip_special_tokens=True)
            top = self._top_logprobs(out.logits, i, len(kept)) if req.want_logprobs else None
            prompt_tokens = int(enc["attention_mask"][i].sum()) if "attention_mask" in enc else prompt_len
            replies.append(
                ModelReply(
                    text=text.strip(),
                    finish_reason="stop" if end is not None else "length",
                    usage={"prompt_tokens": prompt_tokens, "completion_tokens": len(kept) + (end is not None)},
                    top_logprobs=top,
                )
            )
        return replies

    def _top_logprobs(self, logits: Any, row: int, n_tokens: int) -> list[dict[str, float]]:
        """Per generated token, the log-probabilities of the top alternatives (from the raw logits)."""
        import torch

        tok = self.processor.tokenizer
        out = []
        for step in logits[:n_tokens]:
            lp = torch.log_softmax(step[row].float(), dim=-1)
            values, ids = torch.topk(lp, _TOP_LOGPROBS)
            out.append({tok.decode([int(t)]): float(v) for v, t in zip(values, ids, strict=True)})
        return out


def _decode_image(request: ChatRequest) -> Any:
    from PIL import Image, UnidentifiedImageError

    assert request.image is not None
    try:
        with Image.open(io.BytesIO(request.image.data)) as im:
            return im.convert("RGB")
    except (UnidentifiedImageError, OSError) as e:
        raise PermanentModelError(f"image sha256={request.image.sha256} cannot be decoded: {e}") from None


def _model_error(spec: str, e: Exception) -> Exception:
    """Out-of-memory may pass on a retry (smaller batch, freed cache); anything else will not."""
    if isinstance(e, (PermanentModelError, TransientModelError)):
        return e
    if "out of memory" in str(e).lower():
        return TransientModelError(f"{spec}: out of memory during generation: {e}")
    return PermanentModelError(f"{spec}: generation failed: {type(e).__name__}: {e}")


@MODEL_BACKENDS.register("hf", "transformers image-text-to-text model from a local folder (batched, greedy at T=0)")
def build_hf_backend(rest: str, options: BackendOptions) -> HfBackend:
    """``hf:<local path>``: the folder of a saved model (config.json, weights, processor/tokenizer files)."""
    if not rest:
        raise PermanentModelError("the hf backend needs a folder: hf:<local path>")
    folder = Path(rest).expanduser()
    if not folder.is_dir():
        raise PermanentModelError(f"hf model folder {folder} does not exist (models are never downloaded)")
    if not (folder / "config.json").is_file():
        raise PermanentModelError(f"hf model folder {folder} has no config.json; save the model with save_pretrained")
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        raise PermanentModelError(f"the hf backend needs torch and transformers: pip install 'zuhyo[hf]' ({e})") from e
    return HfBackend(f"hf:{rest}", folder, options)
