"""Image embedders for visual diversity: a light perceptual-hash embedder and any local SigLIP/CLIP vision tower.

Embedder specs (registered by kind, like judges):

- ``phash`` or ``phash:<hash size>`` — the DCT perceptual hash (``imagehash.phash``, default 16×16 = 256 bits) as a
  ±1 vector. For ±1 vectors cosine distance is ``2·hamming/bits``, so the diversity it gives is twice the mean
  normalised Hamming distance of the hashes: a quick check that needs no torch, not a semantic embedding.
- ``hf:<local folder>`` — a SigLIP / SigLIP2 / CLIP checkpoint saved with ``save_pretrained`` (full model or vision
  tower only), loaded offline (``local_files_only=True``) with ``AutoModel`` + ``AutoImageProcessor``. Full models
  give ``get_image_features`` (CLIP: the projected image embedding; SigLIP: the pooled vision output), vision
  towers their pooled output; either way L2-normalised. HakushoBench uses SigLIP2 so400m-patch16-512.

torch and transformers are imported only when an ``hf`` embedder is built.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from zuhyo.errors import ImageError, ModelError
from zuhyo.images.verify import on_white
from zuhyo.registry import Registry

if TYPE_CHECKING:
    from PIL.Image import Image

#: Decompression-bomb guard: refuse images whose header claims more pixels than this before decoding.
MAX_DECODE_PIXELS = 100_000_000


class ImageEmbedder(Protocol):
    """Turns decoded RGB images into L2-normalised vectors (one row per image)."""

    spec: str

    def embed(self, images: Sequence[Image]) -> np.ndarray: ...


EmbedderFactory = Callable[[str, "EmbedderOptions"], ImageEmbedder]


@dataclass(frozen=True)
class EmbedderOptions:
    """Options of model-backed embedders."""

    batch_size: int = 16
    device: str = "cpu"


EMBEDDERS: Registry[EmbedderFactory] = Registry("embedder")


def build_embedder(spec: str, options: EmbedderOptions | None = None) -> ImageEmbedder:
    """Build the embedder for ``spec`` (``phash``, ``phash:<size>``, ``hf:<local path>``)."""
    kind, _, rest = spec.partition(":")
    return EMBEDDERS.get(kind)(rest, options or EmbedderOptions())


def decode_rgb(data: bytes, label: str = "image") -> Image:
    """Decode encoded image bytes to RGB; transparency is composited on white (how a chart is seen on a page)."""
    from PIL import Image as PILImage

    try:
        im = PILImage.open(io.BytesIO(data))
        w, h = im.size
        if w * h > MAX_DECODE_PIXELS:
            raise ImageError(f"{label}: {w}x{h} image exceeds {MAX_DECODE_PIXELS:,} pixels")
        im.load()
    except ImageError:
        raise
    except Exception as e:  # noqa: BLE001 - Pillow raises many types on corrupt or non-image bytes
        raise ImageError(f"{label}: cannot decode image: {type(e).__name__}: {e}") from None
    return on_white(im).convert("RGB")


class PHashEmbedder:
    """Perceptual hash bits as a ±1 vector (unit-normalised)."""

    def __init__(self, hash_size: int = 16) -> None:
        if hash_size < 2:
            raise ValueError(f"phash hash size must be >= 2, got {hash_size}")
        self.hash_size = hash_size
        self.spec = f"phash:{hash_size}"

    def embed(self, images: Sequence[Image]) -> np.ndarray:
        import imagehash

        bits = np.stack([np.asarray(imagehash.phash(im, hash_size=self.hash_size).hash, dtype=bool).ravel()
                         for im in images]) if images else np.zeros((0, self.hash_size ** 2), dtype=bool)
        vectors = np.where(bits, 1.0, -1.0).astype(np.float32)
        return vectors / np.sqrt(vectors.shape[1])


@EMBEDDERS.register("phash", "DCT perceptual hash as a ±1 vector (no torch); phash:<hash size>, default 16")
def _phash_factory(rest: str, options: EmbedderOptions) -> ImageEmbedder:
    if not rest:
        return PHashEmbedder()
    try:
        return PHashEmbedder(int(rest))
    except ValueError:
        raise ModelError(f"phash embedder: hash size must be an integer >= 2, got {rest!r}") from None


class HFVisionEmbedder:
    """A local SigLIP/SigLIP2/CLIP checkpoint (full model or vision tower) run with torch.no_grad, batched."""

    def __init__(self, path: Path, options: EmbedderOptions) -> None:
        try:
            import torch
            from transformers import AutoConfig, AutoImageProcessor, AutoModel
        except ImportError as e:
            raise ModelError(f"the hf embedder needs torch and transformers (pip install 'zuhyo[hf]'): {e}") from None
        if not path.is_dir():
            raise ModelError(f"hf embedder: {path} is not a folder saved with save_pretrained")
        try:
            config = AutoConfig.from_pretrained(path, local_files_only=True)
            self.processor = AutoImageProcessor.from_pretrained(path, local_files_only=True)
            model = AutoModel.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError, KeyError) as e:
            raise ModelError(f"hf embedder: cannot load a vision model from {path}: {e}") from None
        self.model_type = str(getattr(config, "model_type", ""))
        self.torch = torch
        self.model = model.to(options.device).eval()
        self.device = options.device
        self.batch_size = max(1, options.batch_size)
        # Full dual-encoder models expose the image embedding; vision towers give the pooled output directly.
        self.full_model = hasattr(model, "get_image_features")
        self.spec = f"hf:{path}"

    def _forward(self, images: Sequence[Image]) -> np.ndarray:
        torch = self.torch
        inputs = self.processor(images=list(images), return_tensors="pt")
        inputs = {k: v.to(self.device) if hasattr(v, "to") else v for k, v in inputs.items()}
        with torch.no_grad():
            out = self.model.get_image_features(**inputs) if self.full_model else self.model(**inputs)
            feats = out if isinstance(out, torch.Tensor) else out.pooler_output
            if feats is None:
                raise ModelError(f"{self.spec}: the model ({self.model_type}) returns no pooled image output")
            feats = torch.nn.functional.normalize(feats.float(), dim=-1)
        return feats.cpu().numpy()

    def embed(self, images: Sequence[Image]) -> np.ndarray:
        parts = [self._forward(images[i:i + self.batch_size]) for i in range(0, len(images), self.batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)


@EMBEDDERS.register("hf", "A local SigLIP/SigLIP2/CLIP vision model folder (transformers + torch), hf:<path>")
def _hf_factory(rest: str, options: EmbedderOptions) -> ImageEmbedder:
    if not rest:
        raise ModelError("hf embedder needs a local folder: --embedder hf:<path>")
    return HFVisionEmbedder(Path(rest).expanduser(), options)


@dataclass
class EmbeddingResult:
    """Embeddings of the images that could be read and decoded, and an error per image that could not."""

    ids: list[str]
    matrix: np.ndarray
    errors: list[str] = field(default_factory=list)


def embed_images(embedder: ImageEmbedder, items: Sequence[tuple[str, bytes]], *,
                 batch: int = 256, progress: Callable[[int], None] | None = None) -> EmbeddingResult:
    """Decode and embed ``(id, encoded bytes)`` items; an undecodable image becomes an error naming its id."""
    ids: list[str] = []
    parts: list[np.ndarray] = []
    errors: list[str] = []
    for start in range(0, len(items), batch):
        chunk_ids: list[str] = []
        decoded: list[Image] = []
        for item_id, data in items[start:start + batch]:
            try:
                decoded.append(decode_rgb(data, item_id))
                chunk_ids.append(item_id)
            except ImageError as e:
                errors.append(str(e))
        if decoded:
            vectors = embedder.embed(decoded)
            if vectors.shape[0] != len(decoded):
                raise ModelError(f"{embedder.spec} returned {vectors.shape[0]} vectors for {len(decoded)} images")
            parts.append(vectors)
            ids += chunk_ids
        if progress is not None:
            progress(len(items[start:start + batch]))
    matrix = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    return EmbeddingResult(ids, matrix, errors)
