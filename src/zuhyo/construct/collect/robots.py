"""robots.txt rules for the HTML collector (HakushoBench §3.1 collects from public ministry sites; be polite).

The outcome of fetching ``/robots.txt`` decides, as RFC 9309 §2.3.1 says: a 2xx body is parsed; a 4xx (no
robots.txt) allows everything; a 5xx or no answer at all (``status`` None) disallows everything for now.
Parsing is :mod:`urllib.robotparser`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.robotparser import RobotFileParser


@dataclass(frozen=True)
class RobotsRules:
    """The rules of one host."""

    parser: RobotFileParser

    def allows(self, url: str, user_agent: str) -> bool:
        """Whether ``user_agent`` may fetch ``url``."""
        return self.parser.can_fetch(user_agent, url)

    def crawl_delay(self, user_agent: str) -> float | None:
        """The ``Crawl-delay`` for ``user_agent`` in seconds, if the file sets one."""
        delay = self.parser.crawl_delay(user_agent)
        return float(delay) if delay is not None else None


def robots_rules(status: int | None, text: str) -> RobotsRules:
    """Rules from the HTTP status and body of a ``/robots.txt`` request (``status`` None: no answer)."""
    parser = RobotFileParser()
    if status is not None and 200 <= status < 300:
        parser.parse(text.splitlines())
    elif status is not None and 400 <= status < 500:
        parser.allow_all = True  # type: ignore[attr-defined]  # documented attributes the stubs lack
    else:
        parser.disallow_all = True  # type: ignore[attr-defined]
    return RobotsRules(parser)


__all__ = ["RobotsRules", "robots_rules"]
