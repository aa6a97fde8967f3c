"""Chat messages and the processor of a local transformers model, for :mod:`zuhyo.models.hf`.

``AutoProcessor`` is used when it can be built. Some processor classes cannot be built without torchvision
even for still images: in transformers 5.x ``Qwen2VLProcessor`` insists on a ``Qwen2VLVideoProcessor``, which
requires torchvision, although its ``Qwen2VLImageProcessorPil`` does not. For those, :class:`ComponentProcessor`
puts the tokenizer and the image processor together and expands the image placeholder itself, exactly as the
Qwen2-VL processor does: one ``<|image_pad|>`` per merged patch, ``prod(image_grid_thw) // merge_size**2``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zuhyo.models.base import ChatRequest, PermanentModelError


def build_messages(request: ChatRequest) -> list[dict[str, Any]]:
    """The conversation in the transformers chat-template format; the image goes with the first user turn."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": [{"type": "text", "text": request.system}]})
    for turn in request.context:
        messages.append({"role": "user", "content": [{"type": "text", "text": turn.question}]})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": turn.answer}]})
    messages.append({"role": "user", "content": [{"type": "text", "text": request.prompt}]})
    if request.image is not None:
        first_user = next(m for m in messages if m["role"] == "user")
        first_user["content"].insert(0, {"type": "image"})
    return messages


class ComponentProcessor:
    """Tokenizer + image processor with the image-token expansion of the Qwen2-VL family done here."""

    def __init__(self, tokenizer: Any, image_processor: Any, chat_template: str, image_token: str) -> None:
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.chat_template = chat_template
        self.image_token = image_token
        self.merge_size = int(image_processor.merge_size)

    def apply_chat_template(
        self, messages: list[dict[str, Any]], add_generation_prompt: bool = True, tokenize: bool = False
    ) -> str:
        text: str = self.tokenizer.apply_chat_template(
            messages, chat_template=self.chat_template, add_generation_prompt=add_generation_prompt, tokenize=False
        )
        return text

    def __call__(
        self, text: list[str], images: list[list[Any]] | None = None, return_tensors: str = "pt", padding: bool = True
    ) -> Any:
        from transformers import BatchFeature

        data: dict[str, Any] = {}
        if images:
            flat = [im for per_sample in images for im in per_sample]
            pixels = self.image_processor(images=flat, return_tensors=return_tensors)
            counts = iter((pixels["image_grid_thw"].prod(-1) // self.merge_size**2).tolist())
            expanded = []
            for t in text:
                parts = t.split(self.image_token)
                out = parts[0]
                for part in parts[1:]:
                    try:
                        out += self.image_token * next(counts) + part
                    except StopIteration:
                        raise PermanentModelError("more image placeholders in the prompts than images") from None
                expanded.append(out)
            text = expanded
            data.update(pixels)
        data.update(self.tokenizer(text, return_tensors=return_tensors, padding=padding))
        return BatchFeature(data)


def load_processor(folder: Path) -> Any:
    """The model's processor from ``folder`` (never downloaded); see the module docstring for the fallback."""
    from transformers import AutoProcessor

    try:
        proc = AutoProcessor.from_pretrained(folder, local_files_only=True)
    except (ImportError, AttributeError) as e:  # a sub-processor that needs torchvision (see module docstring)
        proc = _component_processor(folder, e)
    except (OSError, ValueError) as e:
        raise PermanentModelError(f"cannot load the processor in {folder}: {e}") from None
    if not hasattr(proc, "image_processor") or not hasattr(proc, "tokenizer"):
        raise PermanentModelError(
            f"{folder} has no image processor (preprocessor_config.json / processor_config.json): "
            "it is not a vision-language model folder"
        )
    if not getattr(proc, "chat_template", None) and not getattr(proc.tokenizer, "chat_template", None):
        raise PermanentModelError(f"{folder} has no chat template (chat_template.jinja or tokenizer_config.json)")
    return proc


def _component_processor(folder: Path, cause: BaseException) -> ComponentProcessor:
    from transformers import AutoConfig, AutoImageProcessor, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        image_processor = AutoImageProcessor.from_pretrained(folder, local_files_only=True)
        config = AutoConfig.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, ImportError) as e:
        raise PermanentModelError(f"cannot load the processor in {folder}: {cause}; components: {e}") from None
    image_token_id = getattr(config, "image_token_id", None)
    if not hasattr(image_processor, "merge_size") or image_token_id is None:
        raise PermanentModelError(
            f"cannot build the processor in {folder} ({cause}); zuhyo expands image tokens itself only for the "
            "Qwen2-VL family — install torchvision for this model"
        )
    template = _chat_template(folder) or getattr(tokenizer, "chat_template", None)
    if not template:
        raise PermanentModelError(f"{folder} has no chat template (chat_template.jinja or tokenizer_config.json)")
    image_token = str(tokenizer.convert_ids_to_tokens(int(image_token_id)))
    return ComponentProcessor(tokenizer, image_processor, template, image_token)


def _chat_template(folder: Path) -> str | None:
    """The processor's chat template as saved by transformers (``chat_template.jinja``, older ``.json``)."""
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    for name in ("chat_template.json", "processor_config.json"):
        p = folder / name
        if p.is_file():
            try:
                value = json.loads(p.read_text(encoding="utf-8")).get("chat_template")
            except (ValueError, AttributeError):
                continue
            if isinstance(value, str) and value:
                return value
    return None
