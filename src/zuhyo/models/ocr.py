"""``ocr``: the offline baseline — RapidOCR (PP-OCRv6, Japanese + English) reads the chart, heuristics answer.

It needs no weights download: the ``rapidocr`` wheel ships its ONNX models. OCR is CPU-bound, so it runs in a
worker thread behind one lock (onnxruntime already uses every core for one image; two at once only thrash), and
its result is cached per SHA-256 of the image bytes, so the Direct and CoT prompts and all runs of a sample OCR
the image once. :func:`ocr_text` gives the same cached reading as plain text for the ``cot+ocr`` prompt option.
The answering rules live in :mod:`zuhyo.models.ocr_answer`, the box geometry in :mod:`zuhyo.models.ocr_layout`.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
import threading
from collections import OrderedDict
from concurrent.futures import Future
from functools import lru_cache
from typing import Any

from zuhyo.models.base import MODEL_BACKENDS, BackendOptions, ChatRequest, ModelReply, PermanentModelError
from zuhyo.models.ocr_answer import answer_from_boxes, detect_language, extract_question
from zuhyo.models.ocr_layout import OcrBox, reading_order_text

_CACHE_ENTRIES = 4096
"""OCR results kept (a few KB each): more than the images of any one evaluation run."""
_ANSWER_FORMAT = re.compile(r"answer:\s*'?\s*\$?answer", re.I)


class OcrReader:
    """One RapidOCR engine (created on first use) with a lock and a per-image result cache."""

    def __init__(self) -> None:
        self._engine: Any = None
        self._engine_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._cache: OrderedDict[str, Future[tuple[OcrBox, ...]]] = OrderedDict()
        self.images_read = 0
        """How many images went through the engine (cache misses), for tests and reports."""

    def read(self, data: bytes) -> tuple[OcrBox, ...]:
        """OCR boxes of an encoded image; concurrent calls for the same bytes wait for one OCR."""
        key = hashlib.sha256(data).hexdigest()
        with self._cache_lock:
            fut = self._cache.get(key)
            owner = fut is None
            if fut is None:
                fut = self._cache[key] = Future()
                while len(self._cache) > _CACHE_ENTRIES:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(key)
        if not owner:
            return fut.result()
        try:
            boxes = self._run_engine(data)
        except BaseException as e:
            with self._cache_lock:  # a failure is not cached: the runner's retry OCRs again
                self._cache.pop(key, None)
            fut.set_exception(e)
            raise
        fut.set_result(boxes)
        return boxes

    def _run_engine(self, data: bytes) -> tuple[OcrBox, ...]:
        import numpy as np
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(data)) as im:
                rgb = np.asarray(im.convert("RGB"))
        except (UnidentifiedImageError, OSError) as e:
            raise PermanentModelError(f"OCR cannot decode the image ({len(data)} bytes): {e}") from None
        with self._engine_lock:
            if self._engine is None:
                self._engine = _new_engine()
            # RapidOCR takes BGR arrays (OpenCV order)
            result = self._engine(np.ascontiguousarray(rgb[:, :, ::-1]))
            self.images_read += 1
        if result.boxes is None or not result.txts:
            return ()
        out = []
        for quad, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
            xs = [float(p[0]) for p in quad]
            ys = [float(p[1]) for p in quad]
            if text.strip():
                out.append(OcrBox(text.strip(), min(xs), min(ys), max(xs), max(ys), float(score)))
        return tuple(out)


def _new_engine() -> Any:
    try:
        from rapidocr import RapidOCR
    except ImportError as e:
        raise PermanentModelError("the ocr backend needs rapidocr and onnxruntime: pip install 'zuhyo[ocr]'") from e
    return RapidOCR(params={"Global.log_level": "error"})


@lru_cache(maxsize=1)
def default_reader() -> OcrReader:
    """The process-wide reader shared by :func:`ocr_text` and every ``ocr`` backend (one engine, one cache)."""
    return OcrReader()


def ocr_text(image_bytes: bytes) -> str:
    """The image's text in reading order, one visual line per line (empty string for an image without text)."""
    return reading_order_text(default_reader().read(image_bytes))


class OcrBackend:
    """Answers chart questions from OCR text only (:mod:`zuhyo.models.ocr_answer`); a floor, not a model."""

    is_baseline = True

    def __init__(self, spec: str, options: BackendOptions, reader: OcrReader | None = None) -> None:
        self.spec = spec
        self.max_image_pixels = options.max_image_pixels
        self.reader = reader or default_reader()

    async def generate(self, request: ChatRequest) -> ModelReply:
        """OCR the image (in a thread, cached) and apply the answering heuristics."""
        boxes: tuple[OcrBox, ...] = ()
        if request.image is not None:
            try:
                boxes = await asyncio.to_thread(self.reader.read, request.image.data)
            except PermanentModelError as e:
                raise PermanentModelError(f"image sha256={request.image.sha256}: {e}") from None
        answer = answer_from_boxes(request.prompt, boxes)
        if _ANSWER_FORMAT.search(request.prompt):
            # the CoT prompt asks for a last line "Answer: ..."; give one so answer extraction works unchanged
            ja = detect_language(extract_question(request.prompt)) == "ja"
            lead = "OCRの読み取り結果から回答します。" if ja else "Answered from the OCR text of the chart."
            answer = f"{lead}\nAnswer: {answer}"
        return ModelReply(text=answer, finish_reason="stop", usage={"ocr_boxes": len(boxes)})

    async def aclose(self) -> None:
        """Nothing to release: the engine is shared and freed with the process."""


@MODEL_BACKENDS.register("ocr", "offline baseline: RapidOCR (PP-OCRv6, ja+en) text + answering heuristics")
def build_ocr_backend(rest: str, options: BackendOptions) -> OcrBackend:
    """``ocr`` (no arguments)."""
    if rest:
        raise PermanentModelError(f"the ocr backend takes no arguments; got spec 'ocr:{rest}' (use just 'ocr')")
    return OcrBackend("ocr", options)
