"""The ``hf:<local path>`` backend on tiny randomly initialised Qwen2-VL and SmolVLM (Idefics3) models.

The models are built here from configs (hidden size 64, 1–2 layers) with a byte-level BPE tokenizer trained
offline on a few sentences, saved with ``save_pretrained`` and loaded back through the backend, exactly as a
downloaded checkpoint folder would be. Nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from zuhyo.models.base import (
    BackendOptions,
    ChatRequest,
    GenerationConfig,
    PermanentModelError,
    PreparedImage,
    build_backend,
)
from zuhyo.models.hf_inputs import build_messages
from zuhyo.schema import Turn

QWEN_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{% for c in message['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
IDEFICS_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<end_of_utterance>",
    "<image>",
    "<fake_token_around_image>",
    "<global-img>",
] + [f"<row_{i}_col_{j}>" for i in range(1, 4) for j in range(1, 4)]
IDEFICS_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}: {% for c in message['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}<end_of_utterance>\n"
    "{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)
CORPUS = [
    "What is the value of the bar in 2020? The answer is 42 percent. user assistant system",
    "グラフの値は何ですか。最も多いのはどれですか。",
] * 20


def _tokenizer(specials: list[str], **special_roles: str) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, additional_special_tokens=specials, **special_roles)


def make_tiny_qwen2_vl(folder: Path) -> Path:
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessorPil

    tok = _tokenizer(QWEN_SPECIALS, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    ids = {s: tok.convert_tokens_to_ids(s) for s in QWEN_SPECIALS}
    cfg = Qwen2VLConfig(
        text_config={
            "vocab_size": len(tok),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
            "tie_word_embeddings": True,
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": 64,
            "num_heads": 2,
            "mlp_ratio": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "in_channels": 3,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(0)
    Qwen2VLForConditionalGeneration(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    Qwen2VLImageProcessorPil(min_pixels=56 * 56, max_pixels=28 * 28 * 64).save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(QWEN_TEMPLATE, encoding="utf-8")
    return folder


def make_tiny_smolvlm(folder: Path) -> Path:
    import torch
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
    )

    tok = _tokenizer(
        IDEFICS_SPECIALS, bos_token="<|im_start|>", eos_token="<end_of_utterance>", pad_token="<|endoftext|>"
    )
    ids = {s: tok.convert_tokens_to_ids(s) for s in IDEFICS_SPECIALS}
    cfg = Idefics3Config(
        text_config={
            "model_type": "llama",
            "vocab_size": len(tok),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 2048,
            "bos_token_id": ids["<|im_start|>"],
            "eos_token_id": ids["<end_of_utterance>"],
            "pad_token_id": ids["<|endoftext|>"],
            "tie_word_embeddings": True,
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": 56,
            "patch_size": 14,
        },
        scale_factor=2,
        image_token_id=ids["<image>"],
        pad_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(0)
    Idefics3ForConditionalGeneration(cfg).save_pretrained(folder)
    images = Idefics3ImageProcessorPil(
        do_image_splitting=False, size={"longest_edge": 56}, max_image_size={"longest_edge": 56}
    )
    Idefics3Processor(
        image_processor=images, tokenizer=tok, image_seq_len=4, chat_template=IDEFICS_TEMPLATE
    ).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("torch", reason="the hf backend needs torch (pip install torch==2.13.0)")
    pytest.importorskip("transformers", reason="the hf backend needs transformers (pip install transformers)")
    root = tmp_path_factory.mktemp("hf_models")
    return {
        "qwen2_vl": make_tiny_qwen2_vl(root / "qwen2_vl"),
        "smolvlm": make_tiny_smolvlm(root / "smolvlm"),
    }


def chart_image(color: str, size: tuple[int, int]) -> PreparedImage:
    im = Image.new("RGB", size, "white")
    im.paste(Image.new("RGB", (size[0] // 2, size[1] // 3), color), (size[0] // 4, size[1] // 3))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    data = buf.getvalue()
    return PreparedImage(data, "image/png", size[0], size[1], hashlib.sha256(data).hexdigest())


def requests(max_tokens: int = 6, **kw: Any) -> list[ChatRequest]:
    cfg = GenerationConfig(temperature=0.0, max_tokens=max_tokens)
    images = [chart_image("red", (120, 90)), chart_image("blue", (60, 200)), chart_image("green", (300, 100))]
    return [
        ChatRequest(prompt=f"What is the value of bar {i}?", image=im, config=cfg, **kw) for i, im in enumerate(images)
    ]


def record_prefill_batches(backend: Any) -> list[int]:
    """Batch sizes of the model's prefill forward calls (the first call of each generate has the full prompt)."""
    sizes: list[int] = []

    def hook(_module: Any, _args: Any, kwargs: dict[str, Any]) -> None:
        ids = kwargs.get("input_ids")
        if ids is not None and ids.shape[1] > 1:
            sizes.append(int(ids.shape[0]))

    backend.model.register_forward_pre_hook(hook, with_kwargs=True)
    return sizes


# --- no torch needed -------------------------------------------------------------------------------------------


def test_missing_folder_or_config_is_a_permanent_error(tmp_path: Path) -> None:
    with pytest.raises(PermanentModelError, match="does not exist"):
        build_backend(f"hf:{tmp_path / 'nope'}")
    with pytest.raises(PermanentModelError, match="no config.json"):
        build_backend(f"hf:{tmp_path}")
    with pytest.raises(PermanentModelError, match="needs a folder"):
        build_backend("hf:")


def test_messages_put_the_image_in_the_first_user_turn() -> None:
    req = ChatRequest(
        prompt="And in 2021?",
        image=chart_image("red", (50, 50)),
        system="Be brief.",
        context=(Turn(question="Value in 2020?", answer="42"),),
    )
    msgs = build_messages(req)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[1]["content"] == [{"type": "image"}, {"type": "text", "text": "Value in 2020?"}]
    assert msgs[3]["content"] == [{"type": "text", "text": "And in 2021?"}]
    assert build_messages(ChatRequest(prompt="q", image=None)) == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]}
    ]


# --- tiny models -----------------------------------------------------------------------------------------------


@pytest.mark.hf
@pytest.mark.parametrize("kind", ["qwen2_vl", "smolvlm"])
async def test_concurrent_requests_are_batched_and_greedy_is_deterministic(
    tiny_models: dict[str, Path], kind: str
) -> None:
    backend = build_backend(f"hf:{tiny_models[kind]}", BackendOptions(extra={"batch_size": 8}))
    assert backend.spec == f"hf:{tiny_models[kind]}" and not backend.is_baseline
    batches = record_prefill_batches(backend)
    reqs = requests()
    first = await asyncio.gather(*(backend.generate(r) for r in reqs))
    assert batches == [3]  # three concurrent requests, one generate call
    for reply in first:
        assert isinstance(reply.text, str)
        assert reply.finish_reason in ("stop", "length")
        assert 1 <= reply.usage["completion_tokens"] <= 6
        assert reply.usage["prompt_tokens"] > 10
    again = await asyncio.gather(*(backend.generate(r) for r in reqs))
    assert [r.text for r in again] == [r.text for r in first]
    alone = await backend.generate(reqs[1])  # batch of one: left padding must not change the greedy output
    assert alone.text == first[1].text
    assert batches == [3, 3, 1]
    await backend.aclose()


@pytest.mark.hf
async def test_batch_size_option_caps_batches_and_logprobs_follow_greedy(tiny_models: dict[str, Path]) -> None:
    backend = build_backend(f"hf:{tiny_models['qwen2_vl']}", BackendOptions(extra={"batch_size": "2"}))
    batches = record_prefill_batches(backend)
    replies = await asyncio.gather(*(backend.generate(r) for r in requests(max_tokens=4, want_logprobs=True)))
    assert sorted(batches) == [1, 2]
    for reply in replies:
        assert reply.top_logprobs is not None
        assert len(reply.top_logprobs) == reply.usage["completion_tokens"] - (reply.finish_reason == "stop")
        for step in reply.top_logprobs:
            assert 1 <= len(step) <= 5 and all(v <= 0 for v in step.values())
    await backend.aclose()


@pytest.mark.hf
async def test_qwen_processor_fallback_expands_image_tokens(tiny_models: dict[str, Path]) -> None:
    from zuhyo.models.hf_inputs import ComponentProcessor, load_processor

    proc = load_processor(tiny_models["qwen2_vl"])
    try:
        import torchvision  # noqa: F401
    except ImportError:
        assert isinstance(proc, ComponentProcessor)  # Qwen2VLProcessor cannot be built without torchvision
    req = requests()[2]
    text = proc.apply_chat_template(build_messages(req), add_generation_prompt=True, tokenize=False)
    assert text.count("<|image_pad|>") == 1 and text.endswith("<|im_start|>assistant\n")
    with Image.open(io.BytesIO(req.image.data)) as im:
        enc = proc(text=[text], images=[[im.convert("RGB")]], return_tensors="pt", padding=True)
    image_token_id = proc.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    expected = int(enc["image_grid_thw"].prod(-1).sum()) // 4  # merge_size 2 → 4 patches per token
    assert int((enc["input_ids"] == image_token_id).sum()) == expected > 1


@pytest.mark.hf
async def test_a_corrupt_image_fails_alone(tiny_models: dict[str, Path]) -> None:
    backend = build_backend(f"hf:{tiny_models['smolvlm']}")
    good = requests()
    bad = ChatRequest(
        prompt="What?", image=PreparedImage(b"not a png", "image/png", 1, 1, "cd" * 32), config=good[0].config
    )
    results = await asyncio.gather(*(backend.generate(r) for r in [good[0], bad, good[1]]), return_exceptions=True)
    assert isinstance(results[1], PermanentModelError) and "sha256=cdcd" in str(results[1])
    assert all(isinstance(r.text, str) for r in (results[0], results[2]))  # type: ignore[union-attr]
    await backend.aclose()
    with pytest.raises(PermanentModelError, match="closed"):
        await backend.generate(good[0])


@pytest.mark.hf
def test_bad_options_and_non_vlm_folders_are_permanent_errors(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(PermanentModelError, match="batch_size='many'"):
        build_backend(f"hf:{tiny_models['qwen2_vl']}", BackendOptions(extra={"batch_size": "many"}))
    (tmp_path / "config.json").write_text('{"model_type": "no_such_model"}', encoding="utf-8")
    with pytest.raises(PermanentModelError, match="cannot load the processor"):
        build_backend(f"hf:{tmp_path}")
