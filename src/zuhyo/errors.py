"""Exceptions zuhyo raises on purpose; each message names the item at fault."""

from __future__ import annotations


class ZuhyoError(Exception):
    """Base class: an error with a message meant for the user (the CLI prints it without a traceback)."""


class DataError(ZuhyoError):
    """Bad input data: a malformed row, a missing file, an unreadable image (raised under --strict)."""


class ImageError(ZuhyoError):
    """An image that cannot be used: not an image, corrupt, too large (decompression bomb), missing."""


class ModelError(ZuhyoError):
    """A model call that failed in a way retries cannot fix (bad spec, missing weights)."""
