"""Reading LaTeX source text without a TeX engine: comments, brace groups, environments, simple macros, plain text.

Only what figure collection needs (DomainCQA §4.1 collects figures, captions and their context from arXiv
sources): balanced ``{…}``/``[…]`` arguments, ``\\begin{X}…\\end{X}`` spans, the user's simple macros
(``\\newcommand``/``\\providecommand``/``\\def`` with ``#1``…``#9`` arguments, e.g. the celerite paper's
``\\figurelabel{x}`` → ``\\label{fig:x}``) expanded, and LaTeX turned into plain Unicode with pylatexenc.
Unbalanced braces raise :class:`LatexSyntaxError` naming the line, so a caller can fail one item and go on.

Everything here is linear in the text, so a hostile source (60,000 unclosed ``\\begin{figure}``, thousands of
unclosed groups) costs what its size costs: brace groups are matched once per text (:func:`_index`), environments
in one pass, an optional ``[…]`` argument is looked for over at most :data:`MAX_OPTIONAL_CHARS`, and only the
LaTeX parts of a fragment go through pylatexenc (:func:`to_plain`), the plain words around them are copied.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

_COMMENT = re.compile(r"(?<!\\)((?:\\\\)*)%.*$", re.M)
_TOKEN = re.compile(r"\\([A-Za-z]+|.)", re.S)
_MACRO_DEF = re.compile(r"\\(newcommand|providecommand|def)\b\*?")
_MAX_EXPANSION_PASSES = 12
_BRACES = re.compile(r"\\.|[{}]", re.S)
#: An optional argument ``[…]`` longer than this is not one (a stray ``[``): looking further would make a source
#: with thousands of them quadratic.
MAX_OPTIONAL_CHARS = 4000


class LatexSyntaxError(ValueError):
    """Source that cannot be read (an unclosed brace or environment)."""


def strip_comments(text: str) -> str:
    """Drop ``%`` comments (an escaped ``\\%`` stays; ``\\\\%`` starts a comment after a line break)."""
    return _COMMENT.sub(r"\1", text)


@lru_cache(maxsize=32)
def _index(text: str) -> tuple[dict[int, int], list[int]]:
    """Of one text: each ``{`` (not escaped) → its matching ``}``, and the positions of its line breaks; built in one
    pass and kept for the few texts in hand (a str caches its hash, so a lookup costs nothing)."""
    closes: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACES.finditer(text):
        c = m.group()
        if c == "{":
            stack.append(m.start())
        elif c == "}" and stack:
            closes[stack.pop()] = m.start()
    return closes, [m.start() for m in re.finditer("\n", text)]


def line_of(text: str, pos: int) -> int:
    return bisect.bisect_left(_index(text)[1], pos) + 1


def skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def read_group(text: str, i: int, open_: str = "{", close: str = "}") -> tuple[str, int] | None:
    """The content of the group opening at ``text[i]`` (after blanks) and the index after it; None when no group.

    Raises :class:`LatexSyntaxError` when a brace group is never closed. An optional ``[…]`` group not closed within
    :data:`MAX_OPTIONAL_CHARS` is no group (None).
    """
    j = skip_space(text, i)
    if j >= len(text) or text[j] != open_:
        return None
    if open_ == "{" and close == "}":
        closes = _index(text)[0]
        if j in closes:
            return text[j + 1:closes[j]], closes[j] + 1
        if j == 0 or text[j - 1] != "\\":  # an escaped brace is scanned below as before
            raise LatexSyntaxError(f"a '{open_}' at line {line_of(text, j)} is never closed")
    depth, k = 0, j
    stop = len(text) if open_ == "{" else min(len(text), j + MAX_OPTIONAL_CHARS)
    while k < stop:
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
    if open_ != "{":
        return None
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
    """Outermost environments named ``names`` (nesting of the same name counted), and errors for unclosed ones.

    One pass: every ``\\begin``/``\\end`` of those names is matched on a stack per name first (an environment
    ends where the depth its ``\\begin`` opened returns to zero), then the outermost ones are taken in order; an
    unclosed ``\\begin`` is an error and the search goes on right after it.
    """
    found: list[Environment] = []
    errors: list[str] = []
    alternatives = "|".join(re.escape(n) for n in names)
    tokens = list(re.finditer(r"\\(begin|end)\s*\{(" + alternatives + r")\}", text))
    partner: dict[int, int] = {}
    stacks: dict[str, list[int]] = {}
    for k, t in enumerate(tokens):
        stack = stacks.setdefault(t.group(2), [])
        if t.group(1) == "begin":
            stack.append(k)
        elif stack:
            partner[stack.pop()] = k
    pos = 0
    for k, t in enumerate(tokens):
        if t.group(1) != "begin" or t.start() < pos:
            continue
        name = t.group(2)
        if k not in partner:
            errors.append(f"\\begin{{{name}}} no. {len(found) + len(errors) + 1} is never closed")
            pos = t.end()
            continue
        end = tokens[partner[k]].end()
        found.append(Environment(name, t.start(), t.end(), end))
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
    pieces = _latex_pieces(text)
    if pieces is not None:
        fast = [_fast_piece(piece) if is_latex else piece for is_latex, piece in pieces]
        slow = [piece for (is_latex, piece), done in zip(pieces, fast, strict=True) if is_latex and done is None]
        converted = _pylatexenc(_MARK.join(slow)).split(_MARK) if slow else []
        if len(converted) == len(slow):
            parts = iter(converted)
            plain = "".join(next(parts) if done is None else done for done in fast)
            return re.sub(r"\s+", " ", plain.replace("\xa0", " ")).strip()
    return re.sub(r"\s+", " ", _pylatexenc(text).replace("\xa0", " ")).strip()


#: Joins a fragment's LaTeX pieces for one pylatexenc call (a private-use character: no source has it).
_MARK = "\ue000"
#: A run of text pylatexenc leaves as it is (no macro, group, math, special character or ligature).
_PLAIN = re.compile(r"(?:[^\\{}$~^_&#%`'\-\ue000]|-(?!-)|`(?!`)|'(?!'))+")
_CONTROL_WORD = re.compile(r"\\[A-Za-z]+\*?")
_CONTROL_WORD_END = re.compile(r"\\[A-Za-z]+\*?$")
#: Constructs whose meaning reaches past a blank (environments, display math, verbatim): the whole fragment
#: then goes through pylatexenc.
_WHOLE = re.compile(r"\\(?:begin|end|verb|item|par|[\[(])(?![A-Za-z])|\$\$|\ue000")


def _latex_pieces(text: str) -> list[tuple[bool, str]] | None:
    """``text`` cut into plain runs and LaTeX pieces (a piece ends at a blank outside groups and math, and runs on
    over the blank after a control word, which LaTeX swallows); None when it cannot be cut safely (unbalanced
    groups or math, environments, display math)."""
    if _WHOLE.search(text):
        return None
    out: list[tuple[bool, str]] = []
    i, n = 0, len(text)
    while i < n:
        m = _PLAIN.match(text, i)
        if m is not None:
            out.append((False, m.group()))
            i = m.end()
            continue
        start, depth, math, square = i, 0, False, 0
        while i < n:
            c = text[i]
            if c == "\\":
                w = _CONTROL_WORD.match(text, i)
                i = w.end() if w else i + 2
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth < 0:
                    return None
            elif c == "$":
                math = not math
            elif c == "[":
                square += 1
            elif c == "]" and square:
                square -= 1
            elif c.isspace() and depth == 0 and not math and not square:
                if not _CONTROL_WORD_END.search(text, start, i):
                    break
                while i < n and text[i].isspace():
                    i += 1
                continue
            i += 1
        if depth or math or square:
            return None
        out.append((True, text[start:i]))
    return out


_FAST_TOKEN = re.compile(
    r"(?P<drop>\\(?:textbf|textit|emph|textsf|texttt|textsc|textup|textmd|textnormal|textrm|textsl|mbox|hbox|text|"
    r"bf|it|em|rm|sf|tt|sc)(?![A-Za-z])\s*|[{}])|\\(?P<escaped>[%&$#_{} ])|(?P<special>---|--|``|''|~|\\ldots"
    r"(?![A-Za-z])\s*)|(?P<text>[^\\{}$~`'\-^_&#%]+|[-`'])")
_SPECIALS = {"---": "\u2014", "--": "\u2013", "``": "\u201c", "''": "\u201d", "~": "\xa0"}


_SIMPLE_MATH = re.compile(r"\$((?:\\[A-Za-z]+(?![A-Za-z])\s*|[A-Za-z0-9 =+<>().,^_*/|:;!-])*)\$")
_MATH_MACRO = re.compile(r"\\([A-Za-z]+)")


@lru_cache(maxsize=4096)
def _math_macro(name: str) -> str:
    return _pylatexenc(f"${chr(92)}{name}$")


def _fast_piece(piece: str) -> str | None:
    """What pylatexenc makes of a LaTeX piece of only font commands, braces, escaped characters, ties, dashes and
    quotes, or of inline math of letters, digits, operators and argument-less macros (the commonest), without
    pylatexenc (a math macro such as ``\\alpha`` is asked of it once); None for anything else."""
    math = _SIMPLE_MATH.fullmatch(piece)
    if math is not None:
        return _MATH_MACRO.sub(lambda m: _math_macro(m.group(1)), math.group(1))
    out, pos = [], 0
    for m in _FAST_TOKEN.finditer(piece):
        if m.start() != pos:
            return None
        pos = m.end()
        if m.group("escaped"):
            out.append(m.group("escaped"))
        elif m.group("special"):
            out.append(_SPECIALS.get(m.group("special"), "\u2026"))
        elif m.group("text"):
            out.append(m.group("text"))
    return "".join(out) if pos == len(piece) else None


def _pylatexenc(text: str) -> str:
    walker_db, text_db = _contexts()
    from pylatexenc.latex2text import LatexNodes2Text
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError

    try:
        nodes, _, _ = LatexWalker(text, latex_context=walker_db, tolerant_parsing=True).get_latex_nodes()
        plain: str = LatexNodes2Text(latex_context=text_db, math_mode="text").nodelist_to_text(nodes)
    except RecursionError:
        raise LatexSyntaxError("cannot convert to text: nested too deeply") from None
    except (LatexWalkerError, IndexError, ValueError) as e:
        raise LatexSyntaxError(f"cannot convert to text: {e}") from None
    return plain


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
