"""Site profiles: how one white-paper site lays out its figures, as data (``profiles/*.toml``).

HakushoBench §3.1 collects images from the HTML editions of 33 white-paper series published by different
ministries, each with its own page layout. A profile tells the HTML collector where the content is, which
``<img>`` are figures, where a figure's caption sits relative to its image, how captions, source lines and
back-data links look, which links lead to the edition's other pages and how the edition's path and year read.
Another ministry's (or country's) white papers need a new profile file, not new code; ``--profile`` takes a
bundled profile's name or the path of a ``.toml`` file. The format is documented in ``docs/collect-html.md``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from lxml import etree
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from zuhyo.construct.collect.caption_lines import (
    DEFAULT_CAPTION_PATTERNS,
    DEFAULT_SOURCE_PATTERNS,
    compile_patterns,
)
from zuhyo.errors import ZuhyoError

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
GENERIC = "generic"

CaptionLocation = Literal["figcaption", "table_caption", "preceding", "following", "nearest", "alt", "alt_text"]
DEFAULT_LOCATIONS: tuple[CaptionLocation, ...] = ("figcaption", "table_caption", "nearest", "alt", "alt_text")


class ProfileError(ZuhyoError):
    """An unknown profile name or an invalid profile file."""


class SiteProfile(BaseModel):
    """One site's figure layout. XPath expressions throughout (lxml); regular expressions in Python syntax."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    hosts: list[str] = Field(default_factory=list)
    """Host names this profile is meant for (used to pick a profile for a URL when none is named)."""
    edition_prefix: str = ""
    """Regex matched at the start of a URL path; the matched part is the edition's path prefix (crawl scope).
    Empty, or no match: the start page's directory."""
    edition_year: list[str] = Field(default_factory=list)
    """Regexes searched in the page URL for the edition's year: groups ``era`` (a letter such as ``r``/``h``, or
    an era name) and ``year``, or ``western`` (four digits), or ``yy`` (two-digit Western year)."""
    content_root: list[str] = Field(default_factory=lambda: ["//main", "//body"])
    """XPaths tried in order; the first that matches is the content root (figures and headings are read there)."""
    exclude: list[str] = Field(default_factory=list)
    """XPaths (relative to the content root) of subtrees to ignore: navigation, headers, footers."""
    images: str = ".//img"
    """XPath (relative to the content root) of the figure images."""
    image_src_attrs: list[str] = Field(default_factory=lambda: ["src", "data-src", "data-original"])
    skip_image_src: list[str] = Field(default_factory=lambda: [
        r"(?i)(^|[/_-])(spacer|space|blank|icon|ico|logo|btn|button|arrow|banner|bullet|line|pagetop|print)"
        r"[^/]*$"])
    """Regexes on the image URL; a match is a decoration, not a figure (reported as skipped)."""
    caption_locations: list[CaptionLocation] = Field(default_factory=lambda: list(DEFAULT_LOCATIONS))
    """Where to look for the caption, in order: the ``<figcaption>`` of an enclosing ``<figure>``, the
    ``<caption>`` of an enclosing ``<table>``, the nearest text line before (``preceding``) or after
    (``following``) the image that reads as a caption, the nearer of the two (``nearest``; a caption line
    captions one image at most), an ``alt`` attribute that reads as a caption, the ``alt`` text as is."""
    caption_distance: int = 3
    """How many text lines away from its image a caption, source line or back-data link may be."""
    caption_patterns: list[str] = Field(default_factory=list)
    """Regexes with the groups ``label``, ``number``, ``title``; empty: the built-in white-paper styles."""
    source_patterns: list[str] = Field(default_factory=list)
    """Regexes with the group ``source``; empty: the built-in （出典）/資料：/出典：/Source: styles."""
    back_data_links: list[str] = Field(default_factory=lambda: [r"(?i)\.(csv|xlsx?)([?#].*)?$"])
    """Regexes on a link's absolute URL that mark back data (the numbers behind a chart)."""
    toc_links: str = "//a[@href]"
    """XPath of the links to follow from a table-of-contents (or any) page."""
    page_links: list[str] = Field(default_factory=list)
    """Regexes on a link's absolute URL; when given, only matching links are pages to crawl."""
    not_pages: str = r"(?i)\.(csv|xlsx?|pdf|zip|png|jpe?g|gif|svg|bmp|webp|docx?|pptx?|txt|mp4|mp3)$"
    """Regex on a link's path: files that are not HTML pages (never crawled as pages)."""
    index_entries: str = ""
    """XPath of the entries of a figure-list page (one per figure: caption, page link, back-data links)."""

    _caption_res: tuple[re.Pattern[str], ...] = PrivateAttr(default=())
    _source_res: tuple[re.Pattern[str], ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _check(self) -> SiteProfile:
        self._caption_res = compile_patterns(self.caption_patterns or DEFAULT_CAPTION_PATTERNS,
                                             ("label", "number", "title"))
        self._source_res = compile_patterns(self.source_patterns or DEFAULT_SOURCE_PATTERNS, ("source",))
        compile_patterns([self.edition_prefix, self.not_pages, *self.skip_image_src, *self.back_data_links,
                          *self.page_links, *self.edition_year], ())
        for xpath in [*self.content_root, *self.exclude, self.images, self.toc_links,
                      *([self.index_entries] if self.index_entries else [])]:
            try:
                etree.XPath(xpath)
            except etree.XPathSyntaxError as exc:
                raise ValueError(f"XPath {xpath!r} does not parse: {exc}") from exc
        if self.caption_distance < 1:
            raise ValueError("caption_distance must be at least 1")
        return self

    @property
    def caption_res(self) -> tuple[re.Pattern[str], ...]:
        return self._caption_res

    @property
    def source_res(self) -> tuple[re.Pattern[str], ...]:
        return self._source_res


def profile_names() -> list[str]:
    """The bundled profiles' names, sorted."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))


def load_profile_file(path: Path) -> SiteProfile:
    """Read and validate one profile file; the name defaults to the file's stem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(f"site profile {path}: cannot read: {exc}") from exc
    data.setdefault("name", path.stem)
    try:
        return SiteProfile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "profile"
        raise ProfileError(f"site profile {path}: {where}: {first['msg']}") from exc


def load_profile(name: str) -> SiteProfile:
    """A bundled profile by name (``soumu``, ``generic`` …) or a profile file by path (``my-site.toml``)."""
    if name.endswith(".toml") or "/" in name or "\\" in name:
        path = Path(name)
        if not path.is_file():
            raise ProfileError(f"site profile file {name} not found")
        return load_profile_file(path)
    known = profile_names()
    if name not in known:
        raise ProfileError(f"unknown site profile {name!r}; known profiles: {', '.join(known)} "
                           f"(or give the path of a .toml profile file)")
    return load_profile_file(PROFILE_DIR / f"{name}.toml")


def profile_for_url(url: str) -> SiteProfile:
    """The bundled profile whose ``hosts`` include the URL's host, else the generic fallback."""
    host = (urlsplit(url).hostname or "").lower()
    for name in profile_names():
        profile = load_profile(name)
        if host and host in (h.lower() for h in profile.hosts):
            return profile
    return load_profile(GENERIC)


__all__ = ["GENERIC", "PROFILE_DIR", "CaptionLocation", "ProfileError", "SiteProfile", "load_profile",
           "load_profile_file", "profile_for_url", "profile_names"]
