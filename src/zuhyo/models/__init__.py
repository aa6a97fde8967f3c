"""Model backends behind one async protocol (see :mod:`zuhyo.models.base`)."""

from __future__ import annotations

from zuhyo.models.base import MODEL_BACKENDS, BackendOptions, ChatRequest, ModelReply, build_backend

_BACKEND_MODULES = ("openai_compat", "hf", "ocr")


def ensure_registered() -> None:
    """Import backend modules so they register (each is light; heavy libraries load when a backend is built)."""
    import importlib

    for mod in _BACKEND_MODULES:
        try:
            importlib.import_module(f"zuhyo.models.{mod}")
        except ModuleNotFoundError as e:
            if e.name != f"zuhyo.models.{mod}":
                raise


__all__ = ["MODEL_BACKENDS", "BackendOptions", "ChatRequest", "ModelReply", "build_backend", "ensure_registered"]
