"""Crawl one white-paper edition's HTML pages and yield their figures (HakushoBench §3.1).

HakushoBench collects the images of each white paper's HTML edition (latest edition only). :func:`crawl_edition`
starts from the table of contents (or a figure list), follows links breadth first **within the edition's
scope** (scheme, host and the profile's edition path prefix; see
:func:`~zuhyo.construct.collect.html_figures.edition_scope`), asks each host's ``robots.txt`` first, fetches every
page once through the polite fetcher of ``zuhyo images fetch`` (per-host limit and delay, retries with
Retry-After, byte cap), and yields ``(page_url, ExtractedFigure)`` for every figure of every page. A page that
fails (404, 5xx after retries, not HTML, redirected out of scope) is recorded in the report and the crawl goes
on; a link outside the scope is never fetched. Back-data links read from a figure-list page
(:func:`~zuhyo.construct.collect.html_figures.figure_index`, 防衛白書's zuhyo.html) are added to the figures of that
label found after it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any
from urllib.parse import urldefrag, urlsplit

from pydantic import BaseModel, Field

from zuhyo.construct.collect.html_figures import (
    ExtractedFigure,
    PageFigures,
    edition_scope,
    extract_page,
    figure_index,
    in_scope,
    toc_links,
)
from zuhyo.construct.collect.html_page import decode_html
from zuhyo.construct.collect.profiles import SiteProfile
from zuhyo.construct.collect.robots import RobotsRules, robots_rules
from zuhyo.images.fetch import PageFetchError, PoliteFetcher

#: The longest robots.txt ``Crawl-delay`` obeyed (seconds): a site asking for a day between requests would stall
#: the crawl for good after one page; it is waited this long instead, and the report says so.
DEFAULT_MAX_CRAWL_DELAY_S = 60.0
USER_AGENT = "zuhyo-collect/0.1 (+https://github.com/zuhyo; research benchmark construction)"
_HTML_TYPES = ("text/html", "application/xhtml+xml")


class CrawlError(BaseModel):
    """A page that could not be used, and why."""

    url: str
    message: str
    status: int | None = None


class PageRead(BaseModel):
    """A page just read: its figures, the in-scope links it leads to, how many figure-list entries it has."""

    page: PageFigures
    links: list[str] = Field(default_factory=list)
    index_entries: int = 0


class CrawlReport(BaseModel):
    """What a crawl did; filled in as it goes."""

    scopes: list[str] = Field(default_factory=list)
    pages: int = 0
    """Pages fetched and read."""
    figures: int = 0
    skipped_images: int = 0
    """Images left out as decorations or without a usable URL (see ``PageFigures.skipped``)."""
    robots_blocked: list[str] = Field(default_factory=list)
    """In-scope pages robots.txt does not allow (never fetched)."""
    pages_known: int = 0
    """Pages not fetched because ``known_links`` had them (read by an earlier run; their links followed)."""
    robots_errors: list[CrawlError] = Field(default_factory=list)
    """Hosts whose robots.txt got no answer or a 5xx (RFC 9309: the whole host is then disallowed)."""
    errors: list[CrawlError] = Field(default_factory=list)
    crawl_delays_capped: list[str] = Field(default_factory=list)
    """Hosts whose robots.txt ``Crawl-delay`` was over the cap: what it asked and what was waited instead."""


async def _robots(fetcher: PoliteFetcher, url: str, cache: dict[str, RobotsRules],
                  report: CrawlReport) -> RobotsRules:
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if origin not in cache:
        try:
            page = await fetcher.get(origin + "/robots.txt")
        except PageFetchError as e:
            cache[origin] = robots_rules(e.status, "")
            if e.status is None or e.status >= 500:
                report.robots_errors.append(CrawlError(url=origin + "/robots.txt", message=e.message,
                                                       status=e.status))
        else:
            cache[origin] = robots_rules(200, decode_html(page.body, page.content_type))
    return cache[origin]


async def crawl_edition(start_urls: Sequence[str], profile: SiteProfile, *, scope: str | None = None,
                        report: CrawlReport | None = None, fetcher: PoliteFetcher | None = None,
                        max_pages: int = 5000, user_agent: str = USER_AGENT,
                        on_page: Callable[[PageRead], None] | None = None,
                        robots: dict[str, RobotsRules] | None = None,
                        known_links: Callable[[str], list[str] | None] | None = None,
                        max_crawl_delay_s: float = DEFAULT_MAX_CRAWL_DELAY_S,
                        **fetch_options: Any) -> AsyncIterator[tuple[str, ExtractedFigure]]:
    """Yield ``(page_url, figure)`` for every figure of the edition(s) ``start_urls`` begin.

    ``scope`` (an absolute URL prefix) overrides the scope derived from each start URL. ``report`` is filled in
    as the crawl goes. Without a ``fetcher``, one is opened with ``fetch_options`` (``per_host``, ``delay_s``,
    ``retries``, ``timeout_s`` … of :class:`~zuhyo.images.fetch.PoliteFetcher`). At most ``max_pages`` pages are
    fetched; reaching the limit is recorded as an error. ``on_page(read)`` is called for every page read, before
    its figures are yielded (a page without figures too). ``known_links(url)`` may return the links of a page
    an earlier run read completely: the page is then not fetched and its links are followed. ``robots``
    (origin → rules) is the robots.txt cache, shared when the caller fetches more from the same hosts (the
    images of the pages). A robots.txt ``Crawl-delay`` over ``max_crawl_delay_s`` is waited that long instead,
    and recorded in ``report.crawl_delays_capped``.
    """
    report = report if report is not None else CrawlReport()
    if fetcher is None:
        async with PoliteFetcher(user_agent=user_agent, **fetch_options) as own:
            async for item in crawl_edition(start_urls, profile, scope=scope, report=report, fetcher=own,
                                            max_pages=max_pages, user_agent=user_agent, on_page=on_page,
                                            robots=robots, known_links=known_links,
                                            max_crawl_delay_s=max_crawl_delay_s):
                yield item
        return
    scopes = [scope] if scope else list(dict.fromkeys(edition_scope(u, profile) for u in start_urls))
    report.scopes = scopes
    queue: deque[str] = deque()
    seen: set[str] = set()
    for url in start_urls:
        url = urldefrag(url)[0]
        if url not in seen:
            seen.add(url)
            queue.append(url)
    robots = robots if robots is not None else {}

    def rules_for(target: str) -> RobotsRules:  # a redirect within the scope stays on a host already asked
        parts = urlsplit(target)
        return robots.get(f"{parts.scheme}://{parts.netloc}", robots_rules(None, ""))

    def refuse(target: str) -> str | None:  # checks a redirect target before it is requested
        if not any(in_scope(target, s) for s in scopes):
            return "outside the crawl scope (not followed)"
        return None if rules_for(target).allows(target, user_agent) else "disallowed by robots.txt (not followed)"
    last_fetch: dict[str, float] = {}
    back_data: dict[str, list[str]] = {}
    loop = asyncio.get_running_loop()
    attempts = 0
    while queue:
        url = queue.popleft()
        if not any(in_scope(url, s) for s in scopes):
            report.errors.append(CrawlError(url=url, message="outside the crawl scope (not fetched)"))
            continue
        stored = known_links(url) if known_links is not None else None
        if stored is not None:
            report.pages_known += 1
            for link in stored:
                if link not in seen and any(in_scope(link, s) for s in scopes):
                    seen.add(link)
                    queue.append(link)
            continue
        rules = await _robots(fetcher, url, robots, report)
        if not rules.allows(url, user_agent):
            report.robots_blocked.append(url)
            continue
        if attempts >= max_pages:
            report.errors.append(CrawlError(url=url, message=f"page limit of {max_pages} reached; {len(queue) + 1} "
                                                            "pages not fetched"))
            break
        attempts += 1
        host = urlsplit(url).netloc
        delay = rules.crawl_delay(user_agent)
        if delay is not None and delay > max_crawl_delay_s:
            note = (f"{host}: robots.txt asks for {delay:g} s between requests; waited {max_crawl_delay_s:g} s "
                    "(--max-crawl-delay)")
            if note not in report.crawl_delays_capped:
                report.crawl_delays_capped.append(note)
            delay = max_crawl_delay_s
        if delay and host in last_fetch:
            await asyncio.sleep(max(0.0, last_fetch[host] + delay - loop.time()))
        try:
            page = await fetcher.get(url, refuse)
        except PageFetchError as e:
            report.errors.append(CrawlError(url=url, message=e.message, status=e.status))
            continue
        finally:
            last_fetch[host] = loop.time()
        final = urldefrag(page.url)[0]
        kind = (page.content_type or "text/html").split(";")[0].strip().lower()
        if kind not in _HTML_TYPES:
            report.errors.append(CrawlError(url=url, message=f"not an HTML page (served as {kind})"))
            continue
        html = decode_html(page.body, page.content_type)
        report.pages += 1
        entries = figure_index(html, final, profile)
        for entry in entries:
            back_data.setdefault(entry.caption.label, [])
            back_data[entry.caption.label] += [b for b in entry.back_data if b not in back_data[entry.caption.label]]
        result = extract_page(html, final, profile)
        report.skipped_images += len(result.skipped)
        links = list(dict.fromkeys(link for s in scopes for link in toc_links(html, final, profile, s)))
        if on_page is not None:
            on_page(PageRead(page=result, links=links, index_entries=len(entries)))
        for figure in result.figures:
            extra = back_data.get(figure.label or "", [])
            if extra:
                figure.back_data += [b for b in extra if b not in figure.back_data]
            report.figures += 1
            yield final, figure
        seen.add(final)
        for link in links:
            if link not in seen:
                seen.add(link)
                queue.append(link)


__all__ = ["USER_AGENT", "CrawlError", "CrawlReport", "PageRead", "crawl_edition"]
