"""Reading LaTeX source text without a TeX engine: comments, brace groups, environments, simple macros, plain text.

Only what figure collection needs (DomainCQA §4.1 collects figures, captions and their context from arXiv
sources): balanced ``{…}``/``[…]`` arguments, ``\\begin{X}…\\end{X}`` spans, the user's simple macros
(``\\newcommand``/``\\providecommand``/``\\def`` with ``#1``…``#9`` arguments, e.g. the celerite paper's
``\\figurelabel{x}`` → ``\\label{fig:x}``) expanded, and LaTeX turned into plain Unicode with pylatexenc.
Unbalanced braces raise :class:`LatexSyntaxError` naming the line, so a caller can fail one item and go on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

_COMMENT = re.compile(r"(?<!\\)((?:\\\\)*)%.*$", re.M)
_TOKEN = re.compile(r"\\([A-Za-z]+|.)", re.S)
_MACRO_DEF = re.compile(r"\\(newcommand|providecommand|def)\b\*?")
_MAX_EXPANSION_PASSES = 12


class LatexSyntaxError(ValueError):
    """Source that cannot be read (an unclosed brace or environment)."""


def strip_comments(text: str) -> str:
    """Drop ``%`` comments (an escaped ``\\%`` stays; ``\\\\%`` starts a comment after a line break)."""
    return _COMMENT.sub(r"\1", text)


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def read_group(text: str, i: int, open_: str = "{", close: str = "}") -> tuple[str, int] | None:
    """The content of the group opening at ``text[i]`` (after blanks) and the index after it; None when no group.

    Raises :class:`LatexSyntaxError` when the group is never closed.
    """
    j = skip_space(text, i)
    if j >= len(text) or text[j] != open_:
        return None
    depth, k = 0, j
    while k < len(text):
        c = text[k]
        if c == "\\":
            k += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and close == "}":
                return text[j + 1:k], k + 1
            if depth < 0:
                break
        elif c == close and depth == 0:
            return text[j + 1:k], k + 1
        k += 1
    raise LatexSyntaxError(f"a '{open_}' at line {line_of(text, j)} is never closed")


def read_arg(text: str, i: int) -> tuple[str, int] | None:
    """A mandatory argument: a brace group, or a single token (``\\name`` or one character)."""
    group = read_group(text, i)
    if group is not None:
        return group
    j = skip_space(text, i)
    if j >= len(text) or text[j] in "}]":
        return None
    m = _TOKEN.match(text, j)
    if m:
        return m.group(0), m.end()
    return text[j], j + 1


def read_optional(text: str, i: int) -> tuple[str | None, int]:
    """An optional ``[…]`` argument (None when absent) and the index after it."""
    group = read_group(text, i, "[", "]")
    return (group[0], group[1]) if group is not None else (None, i)


@dataclass(frozen=True)
class Macro:
    nargs: int
    body: str
    default: str | None = None
    """Default of the first argument, which is then optional (``\\newcommand{\\x}[2][d]{…}``)."""


def find_macros(text: str) -> dict[str, Macro]:
    """The simple macros the source defines (``\\renewcommand`` and ``@`` internals are left alone)."""
    macros: dict[str, Macro] = {}
    for m in _MACRO_DEF.finditer(text):
        try:
            parsed = _parse_definition(text, m.end(), m.group(1) == "def")
        except LatexSyntaxError:
            continue
        if parsed is not None:
            name, macro = parsed
            if "@" not in name and _args_ok(macro):
                macros.setdefault(name, macro)
    return macros


def _args_ok(macro: Macro) -> bool:
    return "@" not in macro.body and all(int(n) <= macro.nargs for n in re.findall(r"#(\d)", macro.body))


def _parse_definition(text: str, i: int, is_def: bool) -> tuple[str, Macro] | None:
    if is_def:
        m = re.compile(r"\s*\\([A-Za-z]+)((?:#\d)*)\s*").match(text, i)
        if m is None:
            return None
        body = read_group(text, m.end())
        if body is None:
            return None
        return m.group(1), Macro(len(m.group(2)) // 2, body[0])
    name_group = read_group(text, i)
    if name_group is not None:
        name_text, j = name_group
    else:
        m = re.compile(r"\s*(\\[A-Za-z]+)").match(text, i)
        if m is None:
            return None
        name_text, j = m.group(1), m.end()
    name_m = re.fullmatch(r"\s*\\([A-Za-z]+)\s*", name_text)
    if name_m is None:
        return None
    nargs_text, j = read_optional(text, j)
    default, j = read_optional(text, j) if nargs_text is not None else (None, j)
    body = read_group(text, j)
    if body is None:
        return None
    try:
        nargs = int(nargs_text.strip()) if nargs_text is not None else 0
    except ValueError:
        return None
    return name_m.group(1), Macro(nargs, body[0], default)


def expand_macros(text: str, macros: dict[str, Macro], max_growth: int = 1_000_000) -> str:
    """Expand ``macros`` in ``text`` until nothing changes (bounded: recursive definitions stop, never hang)."""
    if not macros:
        return text
    limit = len(text) * 8 + max_growth
    for _ in range(_MAX_EXPANSION_PASSES):
        out, changed = _expand_once(text, macros)
        if not changed or len(out) > limit:
            return text if len(out) > limit else out
        text = out
    return text


def _expand_once(text: str, macros: dict[str, Macro]) -> tuple[str, bool]:
    parts: list[str] = []
    pos, changed = 0, False
    for m in _TOKEN.finditer(text):
        if m.start() < pos:
            continue
        macro = macros.get(m.group(1))
        if macro is None:
            continue
        args: list[str] = []
        j = m.end()
        if macro.default is not None:
            opt, j = read_optional(text, j)
            args.append(opt if opt is not None else macro.default)
        ok = True
        while len(args) < macro.nargs:
            arg = read_arg(text, j)
            if arg is None:
                ok = False
                break
            args.append(arg[0])
            j = arg[1]
        if not ok:
            continue
        body = _substitute(macro.body, args)
        # A control word swallows the blanks after it; keep a separator so "\kepler data" stays two words.
        if macro.nargs == 0 and j < len(text) and text[j] == " ":
            body += " "
            j = skip_space(text, j)
        parts.append(text[pos:m.start()])
        parts.append(body)
        pos, changed = j, True
    parts.append(text[pos:])
    return "".join(parts), changed


def _substitute(body: str, args: list[str]) -> str:
    return re.sub(r"#(\d)", lambda g: args[int(g.group(1)) - 1] if int(g.group(1)) <= len(args) else "", body)


@dataclass(frozen=True)
class Environment:
    name: str
    start: int
    """Index of ``\\begin``."""
    body_start: int
    end: int
    """Index after ``\\end{name}``."""

    def body(self, text: str) -> str:
        return text[self.body_start:self.end - len(f"\\end{{{self.name}}}")]


def find_environments(text: str, names: tuple[str, ...]) -> tuple[list[Environment], list[str]]:
    """Outermost environments named ``names`` (nesting of the same name counted), and errors for unclosed ones."""
    found: list[Environment] = []
    errors: list[str] = []
    pattern = re.compile(r"\\begin\s*\{(" + "|".join(re.escape(n) for n in names) + r")\}")
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        name = m.group(1)
        inner = re.compile(r"\\(begin|end)\s*\{" + re.escape(name) + r"\}")
        depth, k, end = 1, m.end(), None
        while (t := inner.search(text, k)) is not None:
            depth += 1 if t.group(1) == "begin" else -1
            k = t.end()
            if depth == 0:
                end = k
                break
        if end is None:
            errors.append(f"\\begin{{{name}}} no. {len(found) + len(errors) + 1} is never closed")
            pos = m.end()
            continue
        found.append(Environment(name, m.start(), m.end(), end))
        pos = end
    return found, errors


def find_commands(text: str, name: str) -> list[tuple[int, int]]:
    """(start, end of the name) of each ``\\name`` (not ``\\nameX``) in ``text``."""
    return [(m.start(), m.end()) for m in re.finditer(r"\\" + re.escape(name) + r"(?![A-Za-z])\*?", text)]


def command_args(text: str, name: str, count: int = 1, optional: bool = True) -> list[tuple[int, list[str]]]:
    """Each ``\\name[opt]{a}{b}…``: its position and its ``count`` mandatory arguments (skips incomplete ones)."""
    out = []
    for start, j in find_commands(text, name):
        if optional:
            _, j = read_optional(text, j)
        args = []
        for _ in range(count):
            group = read_group(text, j)
            if group is None:
                break
            args.append(group[0])
            j = group[1]
        if len(args) == count:
            out.append((start, args))
    return out


_REF = re.compile(r"\\(ref|eqref|autoref|cref|Cref|pageref|nameref)\*?\s*\{([^{}]*)\}")
_CITE = re.compile(r"\\(cite[a-zA-Z]*)\*?\s*(?:\[[^\]]*\]\s*)*\{([^{}]*)\}")
_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")


def to_plain(latex: str, numbers: dict[str, str] | None = None) -> str:
    """Plain Unicode text of a LaTeX fragment (pylatexenc), whitespace collapsed.

    ``\\ref`` to a known label becomes its number (``numbers``), an unknown one ``[label]``; citations
    become ``[key, key]``; labels vanish.
    """
    numbers = numbers or {}

    def ref(m: re.Match[str]) -> str:
        keys = [k.strip() for k in m.group(2).split(",") if k.strip()]
        shown = [numbers.get(k, f"[{k}]") for k in keys]
        prefix = "Figure " if m.group(1) in ("autoref", "cref", "Cref") and all(k in numbers for k in keys) else ""
        return prefix + ", ".join(shown)

    text = _LABEL.sub("", latex)
    text = _REF.sub(ref, text)
    text = _CITE.sub(lambda m: "[" + ", ".join(k.strip() for k in m.group(2).split(",")) + "]", text)
    walker_db, text_db = _contexts()
    from pylatexenc.latex2text import LatexNodes2Text
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError

    try:
        nodes, _, _ = LatexWalker(text, latex_context=walker_db, tolerant_parsing=True).get_latex_nodes()
        plain = LatexNodes2Text(latex_context=text_db, math_mode="text").nodelist_to_text(nodes)
    except RecursionError:
        raise LatexSyntaxError("cannot convert to text: nested too deeply") from None
    except (LatexWalkerError, IndexError, ValueError) as e:
        raise LatexSyntaxError(f"cannot convert to text: {e}") from None
    return re.sub(r"\s+", " ", plain.replace("\xa0", " ")).strip()


#: Font and box commands pylatexenc does not know and would drop with their text.
_TEXT_COMMANDS = ("textsf", "texttt", "textsc", "textup", "textmd", "textnormal", "textrm", "textit", "textsl",
                  "mbox", "hbox", "text", "mathrm", "mathsf", "mathtt")


@cache
def _contexts() -> tuple[Any, Any]:
    """pylatexenc's parsing and text contexts, with :data:`_TEXT_COMMANDS` keeping their argument (built once)."""
    from pylatexenc import latex2text, latexwalker, macrospec

    walker_db = latexwalker.get_default_latex_context_db()
    walker_db.add_context_category("zuhyo", prepend=True, macros=[macrospec.MacroSpec(n, "{")
                                                                  for n in _TEXT_COMMANDS])
    text_db = latex2text.get_default_latex_context_db()
    text_db.add_context_category("zuhyo", prepend=True, macros=[
        latex2text.MacroTextSpec(n, simplify_repl="%(1)s") for n in _TEXT_COMMANDS])
    return walker_db, text_db
