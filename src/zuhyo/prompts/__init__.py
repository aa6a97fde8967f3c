"""Prompt templates are data: text files in this package, each starting with a ``# version: N`` line.

``load_prompt("eval/hakusho_direct")`` reads ``prompts/eval/hakusho_direct.txt``. Templates use
``string.Template`` placeholders (``$question``), which never collide with braces in JSON examples.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources

_VERSION_LINE = re.compile(r"^#\s*version:\s*(\S+)\s*$")


@dataclass(frozen=True)
class Prompt:
    """A template's text (version line stripped) and its version."""

    name: str
    text: str
    version: str

    def render(self, **values: str) -> str:
        """Substitute ``$name`` placeholders; a missing value raises KeyError naming it."""
        return string.Template(self.text).substitute(**values)


@cache
def load_prompt(name: str) -> Prompt:
    """Load ``<name>.txt`` from this package (``name`` may contain ``/``)."""
    path = resources.files(__name__).joinpath(*f"{name}.txt".split("/"))
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no prompt template named {name!r} (expected zuhyo/prompts/{name}.txt)") from None
    first, _, rest = raw.partition("\n")
    m = _VERSION_LINE.match(first)
    if not m:
        raise ValueError(f"prompt template {name!r} must start with a '# version: N' line")
    # Only the file's own final newline is dropped: templates copied verbatim from a paper's code (CharXiv's
    # grading rubrics) may end in blank lines that are part of the prompt.
    text = rest[:-1] if rest.endswith("\n") else rest
    return Prompt(name=name, text=text, version=m.group(1))
