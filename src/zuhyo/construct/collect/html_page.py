"""An HTML page as a reader sees it: a sequence of text lines and images, with the headings above each image.

The HTML collector (HakushoBench §3.1: images and their captions from the white papers' HTML editions) finds a
figure's caption, source line and back-data links *near* its ``<img>`` in reading order, whatever the markup
(``<p>``, ``<div>``, ``<br>``-separated lines, tables). :func:`linearize` turns a content root into that reading
order once: a block element, a ``<br>`` or an image ends a line; scripts, styles and excluded subtrees are
skipped. Parsing never raises: broken or empty HTML gives an empty (or partial) page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urljoin

import lxml.html
from lxml import etree

BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
    "html", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "ul",
})
SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "head", "iframe", "object", "select", "button"})
HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4}
_SPACE = re.compile(r"[ \t\r\n\f\v\u00a0]+")


@dataclass
class Line:
    """One line of text (ASCII whitespace collapsed; the ideographic space U+3000 kept)."""

    text: str
    block: etree._Element
    heading: int = 0
    """1-4 when the line is (part of) an h1-h4 heading."""
    links: list[str] = field(default_factory=list)
    """``href`` values of the links on the line, as written."""
    link_chars: int = 0
    """How many characters of the line are link text (a line of links is navigation, not a paragraph)."""


@dataclass
class Image:
    """One ``<img>`` in reading order, with the h1-h4 headings in force where it stands."""

    element: etree._Element
    headings: tuple[str, ...]


Token = Line | Image


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def decode_html(body: bytes, content_type: str | None = None) -> str:
    """Text of an HTML body: the charset of the ``Content-Type`` header, else UTF-8 when the bytes are valid UTF-8,
    else the charset of a ``<meta>`` in the first 4 KB, else CP932 (Shift_JIS as Windows writes it, common on
    older ministry pages); never raises."""
    candidates: list[str] = []
    if content_type:
        m = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", content_type, re.IGNORECASE)
        if m:
            candidates.append(m.group(1))
    candidates.append("utf-8")  # bytes that decode as UTF-8 are UTF-8 whatever a <meta> claims
    m2 = _META_CHARSET.search(body[:4096])
    if m2:
        candidates.append(m2.group(1).decode("ascii", errors="replace"))
    candidates.append("cp932")
    for name in candidates:
        name = {"shift_jis": "cp932", "shift-jis": "cp932", "sjis": "cp932", "x-sjis": "cp932"}.get(name.lower(), name)
        try:
            return body.decode(name)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("utf-8", errors="replace")


def parse_html(html: str | bytes) -> etree._Element:
    """The document element of ``html`` (bytes are decoded by :func:`decode_html`); never raises (an empty
    ``<html>`` for empty or unparseable input)."""
    data = (html if isinstance(html, str) else decode_html(html)).encode("utf-8", errors="replace")
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, recover=True)
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        root = None
    if root is None:
        root = lxml.html.document_fromstring(b"<html><body></body></html>")
    return root


def base_url(doc: etree._Element, page_url: str) -> str:
    """The URL relative links resolve against: the page's ``<base href>`` (itself resolved) or the page URL."""
    for base in doc.iter("base"):
        href = (base.get("href") or "").strip()
        if href:
            return urljoin(page_url, href)
    return page_url


def select_root(doc: etree._Element, xpaths: list[str]) -> etree._Element:
    """The first element matched by one of ``xpaths`` (tried in order), else the document element."""
    for xpath in xpaths:
        try:
            found = doc.xpath(xpath)
        except etree.XPathError:
            continue
        for item in found if isinstance(found, list) else []:
            if isinstance(item, etree._Element):
                return item
    return doc


def text_of(element: etree._Element) -> str:
    """The element's text content, whitespace collapsed (U+3000 kept)."""
    return _SPACE.sub(" ", "".join(element.itertext())).strip(" \u3000")


def _tag(element: etree._Element) -> str:
    tag = element.tag
    return tag.lower() if isinstance(tag, str) else ""


class _Linearizer:
    def __init__(self, excluded: set[etree._Element]) -> None:
        self.excluded = excluded
        self.tokens: list[Token] = []
        self.buffer: list[str] = []
        self.links: list[str] = []
        self.link_chars = 0
        self.in_link = 0
        self.blocks: list[etree._Element] = []
        self.headings: list[str] = ["", "", "", ""]

    def flush(self) -> None:
        text = _SPACE.sub(" ", "".join(self.buffer)).strip(" \u3000")
        if text:
            block = self.blocks[-1]
            level = next((HEADING_LEVELS[_tag(b)] for b in reversed(self.blocks) if _tag(b) in HEADING_LEVELS), 0)
            self.tokens.append(Line(text, block, level, self.links, min(self.link_chars, len(text))))
            if level:
                self.headings[level - 1] = text
                for deeper in range(level, 4):
                    self.headings[deeper] = ""
            self.links = []
        self.link_chars = 0
        self.buffer = []

    def add(self, text: str) -> None:
        self.buffer.append(text)
        if self.in_link:
            self.link_chars += len(text.strip())

    def walk(self, element: etree._Element) -> None:
        tag = _tag(element)
        if not tag or tag in SKIP_TAGS or element in self.excluded:
            return
        if tag == "img":
            self.flush()
            self.tokens.append(Image(element, tuple(h for h in self.headings if h)))
            return
        if tag == "br":
            self.flush()
            return
        block = tag in BLOCK_TAGS
        if block:
            self.flush()
            self.blocks.append(element)
        link = tag == "a" and bool(element.get("href"))
        if link:
            self.links.append(element.get("href", ""))
            self.in_link += 1
        if element.text:
            self.add(element.text)
        for child in element:
            self.walk(child)
            if child.tail:
                self.add(child.tail)
        if link:
            self.in_link -= 1
        if block:
            self.flush()
            self.blocks.pop()


def linearize(root: etree._Element, exclude: Sequence[str] = ()) -> list[Token]:
    """Text lines and images of ``root`` in reading order; subtrees matched by the ``exclude`` XPaths are left out."""
    excluded: set[etree._Element] = set()
    for xpath in exclude:
        try:
            found = root.xpath(xpath)
        except etree.XPathError:
            continue
        excluded.update(e for e in (found if isinstance(found, list) else []) if isinstance(e, etree._Element))
    walker = _Linearizer(excluded)
    walker.blocks.append(root)
    walker.walk(root)
    walker.flush()
    return walker.tokens


__all__ = ["Image", "Line", "Token", "base_url", "decode_html", "linearize", "parse_html", "select_root", "text_of"]
