"""``dry-run``: an offline stand-in model that answers every prompt with a schema-valid placeholder.

It exists to rehearse the construction pipeline without an endpoint (``zuhyo demo build``, or any stage with
``--model dry-run``). A construction stage sends the JSON schema of the reply it wants as ``response_format``
(constrained decoding); the backend fills that schema with placeholders, so every stage's validation passes
unchanged:

- a string is ``dry-run <field> <digest> (1 to 2)`` — distinct per prompt, image and field (so two questions of one
  figure are never duplicates and an answer never occurs in its question), and carrying two numbers (so a
  numeric answer has the values its kind needs);
- an ``enum`` value (an image type, a chart name, a flag) is drawn by the same digest, so labels vary over figures;
  an integer or number takes its minimum, else 1 (a property named ``max`` 10 more, so an axis range is valid,
  linear or log);
- an array of objects whose first property is an ``enum`` lists each value once, in order (a chart-abstract vote
  lists every chart), else it has its minimum number of items (at least one).

A prompt without a schema (an evaluation or audit question) gets ``dry-run placeholder answer`` (with the
``Answer:`` line a chain-of-thought prompt asks for). Whatever it produces is recorded under the model spec
``dry-run``: :func:`is_dry_run` recognises it, and ``zuhyo export`` refuses such items unless ``--allow-dry-run``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from zuhyo.models.base import MODEL_BACKENDS, BackendOptions, ChatRequest, ModelReply, PermanentModelError

SPEC = "dry-run"
PLACEHOLDER_ANSWER = "dry-run placeholder answer"
_LETTERS = str.maketrans("0123456789", "ghijklmnop")
_COT = re.compile(r"answer:|step[- ]by[- ]step|ステップバイステップ", re.I)


def is_dry_run(model: str | None) -> bool:
    """True when ``model`` (a recorded model spec) is the dry-run backend."""
    return model == SPEC or bool(model and model.startswith(f"{SPEC}:"))


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        return _resolve(node, root)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            typed = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
            return _resolve(typed[0] if typed else options[0], root)
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        return _resolve(schema["allOf"][0], root)
    return schema


def fill_schema(schema: dict[str, Any], seed: str, root: dict[str, Any] | None = None, name: str = "value") -> Any:
    """A placeholder value valid against the JSON ``schema`` (the subset pydantic emits), varied by ``seed``."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    digest = _digest(seed, name)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        values = schema["enum"]
        return values[int(digest[:8], 16) % len(values)]
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return {key: fill_schema(sub, seed, root, f"{name}.{key}")
                for key, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return _fill_array(schema, seed, root, name)
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 1))
        value = low + (10 if name.endswith(".max") else 0) + (1 if "exclusiveMinimum" in schema else 0)
        high = schema.get("maximum")
        value = min(value, high) if high is not None else value
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return int(digest[:2], 16) % 2 == 0
    tag = digest[:16].translate(_LETTERS)  # letters only: the placeholder's only numbers are "1 to 2"
    text = f"dry-run {name.rpartition('.')[2]} {tag} (1 to 2)"
    return text.ljust(int(schema.get("minLength", 0)), ".")


def _fill_array(schema: dict[str, Any], seed: str, root: dict[str, Any], name: str) -> list[Any]:
    items = _resolve(schema.get("items") or {"type": "string"}, root)
    props = items.get("properties") or {}
    if props:
        first_key, first = next(iter(props.items()))
        keyed = _resolve(first, root)
        if isinstance(keyed.get("enum"), list):
            rows = []
            for i, value in enumerate(keyed["enum"]):
                row = fill_schema(items, seed, root, f"{name}[{i}]")
                rows.append({**row, first_key: value})
            return rows
    count = max(1, int(schema.get("minItems", 1)))
    if "maxItems" in schema:
        count = min(count, int(schema["maxItems"]))
    return [fill_schema(items, seed, root, f"{name}[{i}]") for i in range(count)]


class DryRunBackend:
    """The ``dry-run`` backend: placeholders, instantly, offline (module doc)."""

    def __init__(self, spec: str = SPEC) -> None:
        self.spec = spec
        self.max_image_pixels: int | None = None
        self.is_baseline = True
        self.requests = 0
        """Requests answered so far."""

    async def generate(self, request: ChatRequest) -> ModelReply:
        self.requests += 1
        fmt = request.config.extra_body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
        if isinstance(schema, dict):
            import json

            seed = _digest(request.prompt, request.image.sha256 if request.image else "")
            return ModelReply(text=json.dumps(fill_schema(schema, seed), ensure_ascii=False), finish_reason="stop")
        text = PLACEHOLDER_ANSWER
        if _COT.search(request.prompt):
            text = f"A dry-run placeholder, not a model's reasoning.\nAnswer: {PLACEHOLDER_ANSWER}"
        return ModelReply(text=text, finish_reason="stop")

    async def aclose(self) -> None:
        """Nothing to release."""


@MODEL_BACKENDS.register(SPEC, "offline placeholders for rehearsals: fills each construction prompt's reply "
                               "schema (zuhyo demo build); dry-run:<name> for more voters; never real data")
def build_dry_run_backend(rest: str, options: BackendOptions) -> DryRunBackend:
    """``dry-run``, or ``dry-run:<name>`` for several distinct voters (``zuhyo abstracts`` needs two or more);
    every name gives the same placeholders."""
    if rest and not re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", rest):
        raise PermanentModelError(f"dry-run:{rest}: a dry-run voter's name is 1-40 letters, digits, '.', '_' or '-'")
    return DryRunBackend(f"{SPEC}:{rest}" if rest else SPEC)
