"""Model backends behind one async protocol (see :mod:`zuhyo.models.base`)."""

from __future__ import annotations

from zuhyo.models.base import MODEL_BACKENDS, BackendOptions, ChatRequest, ModelReply, build_backend
from zuhyo.registry import import_modules

_BACKEND_MODULES = ("openai_compat", "hf", "ocr", "dry_run")


def ensure_registered() -> None:
    """Import backend modules so they register (each is light; heavy libraries load when a backend is built)."""
    import_modules(__name__, _BACKEND_MODULES)


__all__ = ["MODEL_BACKENDS", "BackendOptions", "ChatRequest", "ModelReply", "build_backend", "ensure_registered"]
