"""Figures of one white-paper HTML page, and the links that lead to the edition's other pages.

HakushoBench §3.1 collects the chart and table images of each white paper's HTML edition (latest edition only)
together with their captions. For every ``<img>`` of a page's content root :func:`extract_page` returns the
absolute image URL and, following the site profile (:mod:`zuhyo.construct.collect.profiles`): the caption (label,
figure number, title), the source line (（出典）…), the h1-h4 headings above the image, the paragraphs of the
page that cite the figure by its label, back-data links (csv/xls/xlsx) near it, the era years named in caption
and source as Western years, the edition's year and the alt text. Images that are decorations (icons, spacers)
or have no usable URL are reported as skipped with a reason, never dropped silently. :func:`toc_links` lists the
in-scope pages a table of contents links to; :func:`figure_index` reads a figure-list page (防衛白書's
zuhyo.html). All functions are pure (HTML text in, models out) and never raise on broken HTML.
"""

from __future__ import annotations

import re
from urllib.parse import urldefrag, urljoin, urlsplit

from lxml import etree
from pydantic import BaseModel, Field

from zuhyo.construct.collect.caption_lines import Caption, era_years, fold_width, parse_caption, parse_source_line
from zuhyo.construct.collect.html_page import Image, Line, Token, base_url, linearize, parse_html, select_root, text_of
from zuhyo.construct.collect.profiles import SiteProfile


class ExtractedFigure(BaseModel):
    """One image of a page with what the page says about it."""

    image_url: str
    page_url: str
    caption: str = ""
    """The caption line as printed (label and title), or the alt text for an image without a caption line."""
    caption_from: str = ""
    """Where the caption was found: figcaption, table_caption, preceding, following, nearest, alt, alt_text."""
    label: str | None = None
    """``図表1-1-2-1``, ``第3-3-12図``, ``Figure 2`` (None when the caption has no figure label)."""
    figure_number: str | None = None
    title: str = ""
    source_line: str | None = None
    """The source line as printed: ``（出典）総務省作成資料``."""
    source: str | None = None
    """The source alone: ``総務省作成資料``."""
    headings: list[str] = Field(default_factory=list)
    """The h1-h4 headings in force where the image stands, outermost first."""
    citing_paragraphs: list[str] = Field(default_factory=list)
    """Paragraphs of the page that cite the figure by its label (the caption line itself excluded)."""
    back_data: list[str] = Field(default_factory=list)
    """Absolute URLs of the figure's back-data files (csv/xls/xlsx)."""
    years: list[int] = Field(default_factory=list)
    """Western years of the era years (令和5年 → 2023) named in the caption and the source line."""
    edition_year: int | None = None
    """The edition's Western year, from the page URL (profile ``edition_year``) or the title (令和5年版)."""
    alt: str = ""


class SkippedImage(BaseModel):
    """An ``<img>`` that is not collected, and why."""

    src: str
    reason: str


class PageFigures(BaseModel):
    """What one page holds."""

    page_url: str
    title: str = ""
    figures: list[ExtractedFigure] = Field(default_factory=list)
    skipped: list[SkippedImage] = Field(default_factory=list)


class IndexEntry(BaseModel):
    """One entry of a figure-list page: a caption, the page(s) it links to and its back-data links."""

    caption: Caption
    pages: list[str] = Field(default_factory=list)
    back_data: list[str] = Field(default_factory=list)


def _image_src(element: etree._Element, profile: SiteProfile) -> str:
    for attr in profile.image_src_attrs:
        value = (element.get(attr) or "").strip()
        if value:
            return value
    return ""


def _matches_any(patterns: list[str], text: str) -> bool:
    return any(re.search(p, text) for p in patterns)


def edition_year(page_url: str, title: str, profile: SiteProfile) -> int | None:
    """The edition's Western year: from the URL by the profile's ``edition_year`` patterns, else from a
    ``令和5年版``-style era year in the title."""
    eras = {"r": "令和", "h": "平成", "s": "昭和"}
    path = urlsplit(page_url).path
    for pattern in profile.edition_year:
        m = re.search(pattern, path)
        if m is None:
            continue
        groups = m.groupdict()
        if groups.get("western"):
            return int(groups["western"])
        if groups.get("yy"):
            yy = int(groups["yy"])
            return 2000 + yy if yy < 50 else 1900 + yy
        if groups.get("era") and groups.get("year"):
            era = eras.get(groups["era"].lower(), groups["era"])
            years = era_years(f"{era}{groups['year']}年")
            if years:
                return years[0]
    m = re.search(r"(明治|大正|昭和|平成|令和)[\s　]*(元|[0-9０-９]+)[\s　]*年(?:度)?版", title)
    if m:
        years = era_years(m.group(0).replace("版", "").replace("度", ""))
        return years[0] if years else None
    return None


def _citation_re(caption: Caption) -> re.Pattern[str]:
    """How the page's text names the figure: its label, not followed by another digit (図表1-1-2-1 is not
    図表1-1-2-10) nor part of a longer label (表1-2 is not 図表1-2 or 付表1-2); Figure 3 and Fig. 3 alike."""
    if re.match(r"(?i)fig", caption.label):
        words = r"(?:Figure|Fig\.?)\s*" + re.escape(caption.figure_number)
        return re.compile(rf"(?<![A-Za-z]){words}(?![0-9A-Za-z])", re.IGNORECASE)
    label = re.escape(caption.label).replace(r"\ ", r"\s*")
    if caption.label[:1].isascii():
        return re.compile(rf"(?<![A-Za-z]){label}(?![0-9A-Za-z])", re.IGNORECASE)
    return re.compile(rf"(?<![図付ム第]){label}(?![0-9])")


class _Page:
    """The linearised content of one page, with the caption and source reading of every line done once."""

    def __init__(self, tokens: list[Token], profile: SiteProfile) -> None:
        self.tokens = tokens
        self.profile = profile
        self.captions: dict[int, Caption] = {}
        self.sources: dict[int, str] = {}
        for i, token in enumerate(tokens):
            if isinstance(token, Line) and not token.heading:
                caption = parse_caption(token.text, profile.caption_res)
                if caption is not None and not caption.title.endswith(("。", "．")):  # a sentence is body text
                    self.captions[i] = caption
                    continue
                source = parse_source_line(token.text, profile.source_res)
                if source is not None:
                    self.sources[i] = source

    def scan(self, start: int, step: int) -> list[int]:
        """Indices of the lines from ``start`` in direction ``step``, up to the profile's distance, stopping at
        an image."""
        out: list[int] = []
        i = start + step
        while 0 <= i < len(self.tokens) and len(out) < self.profile.caption_distance:
            if isinstance(self.tokens[i], Image):
                break
            out.append(i)
            i += step
        return out


def _container_caption(element: etree._Element, container: str, caption_tag: str) -> str | None:
    for ancestor in element.iterancestors(container):
        for found in ancestor.iter(caption_tag):
            text = text_of(found)
            if text:
                return text
        return None
    return None


def _assign_captions(page: _Page, images: list[int]) -> dict[int, tuple[str, Caption | None, int | None, str]]:
    """image index → (caption text, parsed caption, caption line index, where found). Each caption line captions
    at most one image; locations are tried in the profile's order, each over all images."""
    found: dict[int, tuple[str, Caption | None, int | None, str]] = {}
    used: set[int] = set()
    res = page.profile.caption_res
    for location in page.profile.caption_locations:
        if location == "nearest":
            for line in sorted(page.captions):
                if line in used:
                    continue
                options = []
                for step, rank in ((+1, 0), (-1, 1)):  # on a tie the image after the caption (caption above)
                    image = line + step * (len(page.scan(line, step)) + 1)
                    if (0 <= image < len(page.tokens) and isinstance(page.tokens[image], Image) and image not in found
                            and image in images and abs(image - line) <= page.profile.caption_distance):
                        options.append((abs(image - line), rank, image))
                if options:
                    image = min(options)[2]
                    found[image] = (page.captions[line].line, page.captions[line], line, location)
                    used.add(line)
            continue
        for image in images:
            if image in found:
                continue
            token = page.tokens[image]
            assert isinstance(token, Image)
            if location in ("preceding", "following"):
                for line in page.scan(image, -1 if location == "preceding" else +1):
                    if line in page.captions and line not in used:
                        found[image] = (page.captions[line].line, page.captions[line], line, location)
                        used.add(line)
                        break
                continue
            if location in ("figcaption", "table_caption"):
                container, tag = ("figure", "figcaption") if location == "figcaption" else ("table", "caption")
                text = _container_caption(token.element, container, tag)
            else:
                text = " ".join((token.element.get("alt") or "").split())
            if not text:
                continue
            caption = parse_caption(text, res)
            if caption is not None or location in ("figcaption", "table_caption", "alt_text"):
                found[image] = (text, caption, None, location)
    return found


def _zone(page: _Page, image: int, caption_line: int | None) -> list[int]:
    """The lines that belong to an image's figure: from its caption line (when above) through the lines after
    it, up to the profile's distance, stopping at another image or another caption."""
    lines: list[int] = []
    if caption_line is not None and caption_line < image:
        lines.extend(range(caption_line, image))
    for line in page.scan(image, +1):
        if line in page.captions and line != caption_line:
            break
        lines.append(line)
    return lines


def extract_page(html: str | bytes, page_url: str, profile: SiteProfile) -> PageFigures:
    """Every image of the page's content root: collected figures and skipped images (with reasons)."""
    doc = parse_html(html)
    base = base_url(doc, page_url)
    title_el = doc.find(".//title")
    title = text_of(title_el) if title_el is not None else ""
    root = select_root(doc, profile.content_root)
    tokens = linearize(root, profile.exclude)
    page = _Page(tokens, profile)
    wanted = set(root.xpath(profile.images)) if profile.images else set()
    result = PageFigures(page_url=page_url, title=title)
    images: list[int] = []
    for i, token in enumerate(tokens):
        if not isinstance(token, Image) or token.element not in wanted:
            continue
        src = _image_src(token.element, profile)
        if not src:
            result.skipped.append(SkippedImage(src="", reason="no src attribute"))
            continue
        url = urldefrag(urljoin(base, src))[0]
        scheme = urlsplit(url).scheme
        if scheme not in ("http", "https", "file"):
            result.skipped.append(SkippedImage(src=src[:200], reason=f"not an http(s) URL ({scheme or 'none'})"))
            continue
        if _matches_any(profile.skip_image_src, urlsplit(url).path):
            result.skipped.append(SkippedImage(src=src, reason="decoration (matches skip_image_src)"))
            continue
        images.append(i)
    captions = _assign_captions(page, images)
    year = edition_year(page_url, title, profile)
    for i in images:
        token = tokens[i]
        assert isinstance(token, Image)
        text, caption, caption_line, where = captions.get(i, ("", None, None, ""))
        zone = _zone(page, i, caption_line)
        source_line = next((j for j in zone if j in page.sources), None)
        back_data: list[str] = []
        for j in zone:
            line = tokens[j]
            assert isinstance(line, Line)
            for href in line.links:
                link = urldefrag(urljoin(base, href.strip()))[0]
                if _matches_any(profile.back_data_links, link) and link not in back_data:
                    back_data.append(link)
        citing: list[str] = []
        if caption is not None:
            rx = _citation_re(caption)
            for j, line in enumerate(tokens):
                if (isinstance(line, Line) and j != caption_line and j not in page.captions and j not in page.sources
                        and not line.heading and line.link_chars * 2 < len(line.text)
                        and rx.search(fold_width(line.text)) and line.text not in citing):
                    citing.append(line.text)
        src_text = tokens[source_line].text if source_line is not None else None  # type: ignore[union-attr]
        years: list[int] = []
        for y in era_years(text) + era_years(src_text or ""):
            if y not in years:
                years.append(y)
        result.figures.append(ExtractedFigure(
            image_url=urldefrag(urljoin(base, _image_src(token.element, profile)))[0], page_url=page_url,
            caption=text, caption_from=where,
            label=caption.label if caption else None, figure_number=caption.figure_number if caption else None,
            title=caption.title if caption else text, source_line=src_text,
            source=page.sources.get(source_line) if source_line is not None else None,
            headings=list(token.headings), citing_paragraphs=citing, back_data=back_data, years=years,
            edition_year=year, alt=" ".join((token.element.get("alt") or "").split())))
    return result


def extract_figures(html: str | bytes, page_url: str, profile: SiteProfile) -> list[ExtractedFigure]:
    """The figures of one page (see :func:`extract_page` for the skipped images too)."""
    return extract_page(html, page_url, profile).figures


def edition_scope(url: str, profile: SiteProfile) -> str:
    """The crawl scope of the edition ``url`` belongs to, as an absolute URL prefix: scheme, host and the path
    prefix matched by the profile's ``edition_prefix``, else the URL's directory."""
    parts = urlsplit(url)
    prefix = ""
    if profile.edition_prefix:
        m = re.match(profile.edition_prefix, parts.path)
        if m:
            prefix = m.group(0)
    if not prefix:
        prefix = parts.path.rsplit("/", 1)[0] + "/"
    return f"{parts.scheme}://{parts.netloc}{prefix}"


def in_scope(url: str, scope_prefix: str) -> bool:
    """Whether ``url`` lies within ``scope_prefix`` (same scheme and host, path under the prefix's path)."""
    u, s = urlsplit(url), urlsplit(scope_prefix)
    return (u.scheme, (u.netloc or "").lower()) == (s.scheme, (s.netloc or "").lower()) and u.path.startswith(s.path)


def _link_urls(doc: etree._Element, xpath: str, base: str) -> list[str]:
    try:
        found = doc.xpath(xpath)
    except etree.XPathError:
        return []
    hrefs = [str(f) for f in found if not isinstance(f, etree._Element)] if isinstance(found, list) else []
    hrefs += [e.get("href", "") for e in (found if isinstance(found, list) else []) if isinstance(e, etree._Element)]
    return [urldefrag(urljoin(base, h.strip()))[0] for h in hrefs if h.strip() and not h.strip().startswith("#")]


def toc_links(html: str | bytes, page_url: str, profile: SiteProfile, scope_prefix: str) -> list[str]:
    """Pages a table of contents (or any page) links to within ``scope_prefix``, absolute, without fragments, in
    page order, each once; the page itself, files that are not pages and (with the profile's ``page_links``)
    links that are not edition pages are left out. A path-only ``scope_prefix`` (``/whitepaper/ja/r05/``) is
    taken on the page's host."""
    if scope_prefix.startswith("/"):
        parts = urlsplit(page_url)
        scope_prefix = f"{parts.scheme}://{parts.netloc}{scope_prefix}"
    doc = parse_html(html)
    own = urldefrag(page_url)[0]
    out: list[str] = []
    for url in _link_urls(doc, profile.toc_links, base_url(doc, page_url)):
        path = urlsplit(url).path
        if url == own or url in out or not in_scope(url, scope_prefix) or re.search(profile.not_pages, path):
            continue
        if profile.page_links and not _matches_any(profile.page_links, url):
            continue
        out.append(url)
    return out


def figure_index(html: str | bytes, page_url: str, profile: SiteProfile) -> list[IndexEntry]:
    """The entries of a figure-list page (profile ``index_entries``): each entry whose text starts with a
    caption, with the pages it links to and its back-data links (absolute)."""
    if not profile.index_entries:
        return []
    doc = parse_html(html)
    base = base_url(doc, page_url)
    try:
        found = doc.xpath(profile.index_entries)
    except etree.XPathError:
        return []
    out: list[IndexEntry] = []
    for entry in found if isinstance(found, list) else []:
        if not isinstance(entry, etree._Element):
            continue
        caption = None  # the text of a link first (so "csv形式" beside it is not part of the title), then lines
        texts = [text_of(a) for a in entry.iter("a")] + [t.text for t in linearize(entry) if isinstance(t, Line)]
        for text in texts:
            caption = parse_caption(text, profile.caption_res)
            if caption is not None:
                break
        if caption is None:
            continue
        item = IndexEntry(caption=caption)
        for url in _link_urls(entry, ".//a[@href]", base):
            target = item.back_data if _matches_any(profile.back_data_links, url) else item.pages
            if url not in target:
                target.append(url)
        out.append(item)
    return out


__all__ = ["ExtractedFigure", "IndexEntry", "PageFigures", "SkippedImage", "edition_scope", "edition_year",
           "extract_figures", "extract_page", "figure_index", "in_scope", "toc_links"]
