"""The record type of one ``sample-ja`` item and helpers shared by the item modules.

An item holds the underlying numbers (``data``), how to draw them, the question, and a function that
*computes* the reference answer from ``data``; ``expected`` is the hand-checked answer the computation must
reproduce (the renderer asserts both agree, so neither a data typo nor a formula slip goes unnoticed).
``quotes`` are verbatim passages of the source text that state the numbers, checked against the text file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from zuhyo.schema import Flag, ImageType, TopicGroup

WHITE_PAPER_R5 = "令和5年版 情報通信白書"
WP_PUBLISHER = "総務省"
WP_LICENSE = "CC BY 4.0"
WP_PAGE_BASE = "https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/text/"


def wp_url(page: str) -> str:
    """URL of a text page of the 令和5年版 情報通信白書 (``page`` like "nd241510")."""
    return f"{WP_PAGE_BASE}{page}.txt"


@dataclass(frozen=True)
class JaItem:
    """One Japanese chart/table image with one hard QA pair."""

    id: str
    image_type: ImageType
    topic: TopicGroup
    caption: str
    """Caption printed on the rendered image."""
    data: dict[str, Any]
    draw: Callable[[dict[str, Any]], Figure]
    question: str
    answer: Callable[[dict[str, Any]], list[str]]
    """Reference answers computed from ``data``; the first is the primary one, others are equivalent notations."""
    expected: str
    flags: tuple[Flag, ...]
    quotes: tuple[str, ...] = ()
    """Verbatim passages of the white-paper text that state the numbers used."""
    page: str | None = None
    """White-paper text page (nd… code) the quotes come from; None for non-white-paper statistics."""
    source_title: str = WHITE_PAPER_R5
    source_publisher: str = WP_PUBLISHER
    source_url: str | None = None
    source_license: str | None = WP_LICENSE
    data_origin: str = ""
    """The original statistic the white paper cites (its （出典） line), or the official survey used."""
    white_paper: str = WHITE_PAPER_R5
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str | None:
        """Source URL: the white-paper page, or ``source_url`` for other statistics."""
        return wp_url(self.page) if self.page else self.source_url
