"""A paper's figures from its LaTeX: environments, graphics, captions, labels, citing paragraphs, abstract.

DomainCQA §4.1 takes its charts from arXiv papers; its chart-abstract step (§3.1, Algorithm 2, steps 4 and 6)
needs each chart's caption and surrounding description (here: the paragraphs that cite it) and the paper's
abstract and conclusion. Here, from the source with its ``\\input`` files inlined:

- every ``figure``/``figure*`` environment, numbered as LaTeX would (one counter, environments with a caption);
- its graphics: ``\\includegraphics`` (``\\graphicspath`` honoured, extension optional), AASTeX ``\\plotone``,
  ``\\plottwo`` and ``\\gridline{\\fig{file}{width}{sub-caption}}``, old ``\\epsfig``/``\\psfig`` — one figure
  per graphic, sharing caption and label, with a sub-index;
- AASTeX figure sets (``\\figsetstart`` … ``\\figsetgrpstart`` … ``\\figsetplot`` … ``\\figsetend``): one figure
  per group, captioned by the group title and note;
- the caption as plain Unicode after expanding the paper's own simple macros, the labels (also those a macro
  such as ``\\figurelabel{x}`` defines), and the paragraphs that ``\\ref``/``\\autoref``/``\\cref`` a label.

A figure environment that cannot be read (an unclosed brace) becomes an error for that figure only.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from zuhyo.construct.collect.latex_text import (
    Environment,
    LatexSyntaxError,
    command_args,
    expand_macros,
    find_environments,
    find_macros,
    read_arg,
    read_group,
    read_optional,
    to_plain,
)

FIGURE_ENVS = ("figure", "figure*")
_SECTION = re.compile(r"\\(section|subsection|subsubsection)\*?\s*(?=[\[{])")
_CONCLUSION_TITLES = (r"conclusions?", r"summary and conclusions?", r"conclusions? and \w+", r"discussion and "
                      r"conclusions?", r"summary", r"discussion")
MAX_CONTEXT = 10
#: Unclosed figure environments reported one by one; the rest are one error.
MAX_UNCLOSED_SHOWN = 20


@dataclass
class Graphic:
    file: str
    """As written in the source (``figures/sho.pdf``, ``cost``)."""
    subcaption: str | None = None


@dataclass
class PaperFigure:
    key: str
    """Stable within the paper: ``figure3``, ``figset4.2``."""
    graphics: list[Graphic] = field(default_factory=list)
    caption: str | None = None
    figure_number: str | None = None
    labels: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    section: str | None = None
    extra: dict[str, object] = field(default_factory=dict)
    error: str | None = None


@dataclass
class Paper:
    title: str | None = None
    abstract: str | None = None
    conclusion: str | None = None
    conclusion_heading: str | None = None
    graphicspath: tuple[str, ...] = ("",)
    figures: list[PaperFigure] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Parts of the paper that could not be read (abstract, conclusion), with why."""


def parse_paper(text: str) -> Paper:
    """Everything figure collection needs from ``text`` (comments stripped, includes inlined)."""
    macros = find_macros(text)
    body_at = text.find("\\begin{document}")
    body = text[body_at:] if body_at >= 0 else text
    paper = Paper(graphicspath=_graphicspath(text))
    envs, unclosed = find_environments(body, FIGURE_ENVS)
    sections = _sections(body, macros)
    starts = [s[0] for s in sections]
    numbers: dict[str, str] = {}
    counter = 0
    for i, env in enumerate(envs, 1):
        fig = _parse_env(body, env, macros, i)
        fig.section = _section_at(sections, starts, env.start)
        if re.search(r"\\(fig)?caption(?![A-Za-z])", env.body(body)):  # LaTeX numbers figures by \caption
            counter += 1
            fig.figure_number = str(counter)
            for label in fig.labels:
                numbers.setdefault(label, fig.figure_number)
        paper.figures.append(fig)
    for message in unclosed[:MAX_UNCLOSED_SHOWN]:
        paper.figures.append(PaperFigure(key=f"unclosed{len(paper.figures) + 1}", error=message))
    if len(unclosed) > MAX_UNCLOSED_SHOWN:  # one item for the rest: 60,000 of them are one problem, not 60,000
        paper.figures.append(PaperFigure(key="unclosed-more", error=(
            f"{len(unclosed) - MAX_UNCLOSED_SHOWN:,} more figure environments are never closed")))
    paper.figures.extend(_figure_sets(body, macros))
    _add_captions_and_context(paper, body, envs, macros, numbers)
    paper.title = _first_plain(text, "title", macros, numbers)
    abstract = find_environments(body, ("abstract",))[0] or find_environments(text, ("abstract",))[0]
    if abstract:
        source = body if find_environments(body, ("abstract",))[0] else text
        try:
            paper.abstract = _plain_or_none(expand_macros(abstract[0].body(source), macros), numbers)
        except LatexSyntaxError as e:
            paper.problems.append(f"abstract: {e}")
    try:
        paper.conclusion_heading, paper.conclusion = _conclusion(body, sections, macros, numbers)
    except LatexSyntaxError as e:
        paper.problems.append(f"conclusion: {e}")
    return paper


def _graphicspath(text: str) -> tuple[str, ...]:
    dirs = [""]
    for _, (arg,) in command_args(text, "graphicspath", 1, optional=False):
        dirs += [d.strip() for d in re.findall(r"\{([^{}]*)\}", arg) if d.strip()]
    return tuple(dirs)


def _parse_env(body: str, env: Environment, macros: dict, index: int) -> PaperFigure:
    fig = PaperFigure(key=f"figure{index}", extra={"environment": env.name})
    inner = env.body(body)
    try:
        expanded = expand_macros(inner, macros)
        fig.graphics = _graphics(expanded)
        caption = _caption_source(expanded)
        fig.labels = re.findall(r"\\label\s*\{([^{}]*)\}", expanded)
        fig.extra["caption_latex"] = caption
    except LatexSyntaxError as e:
        fig.error = f"{env.name} environment no. {index} does not parse: {e} (lines counted from its \\begin)"
        return fig
    if not fig.graphics:
        fig.error = f"{env.name} environment no. {index} has no \\includegraphics, \\plotone or \\fig"
    return fig


def _caption_source(text: str) -> str | None:
    found = command_args(text, "caption", 1) or command_args(text, "figcaption", 1)
    return found[-1][1][0] if found else None


def _graphics(text: str) -> list[Graphic]:
    """Graphics in document order (``\\includegraphics``, ``\\plotone``, ``\\plottwo``, ``\\fig``, ``\\epsfig``)."""
    found: list[tuple[int, Graphic]] = []
    for pos, (file,) in command_args(text, "includegraphics", 1):
        found.append((pos, Graphic(file.strip())))
    for pos, (file,) in command_args(text, "plotone", 1, optional=False):
        found.append((pos, Graphic(file.strip())))
    for pos, (a, b) in command_args(text, "plottwo", 2, optional=False):
        found += [(pos, Graphic(a.strip())), (pos, Graphic(b.strip()))]
    for pos, (file, _width, sub) in command_args(text, "fig", 3, optional=False):
        found.append((pos, Graphic(file.strip(), to_plain(sub) or None)))
    for name in ("epsfig", "psfig"):
        for pos, (opts,) in command_args(text, name, 1, optional=False):
            m = re.search(r"(?:file|figure)\s*=\s*([^,}]+)", opts)
            if m:
                found.append((pos, Graphic(m.group(1).strip())))
    found.sort(key=lambda f: f[0])
    return [g for _, g in found]


def _figure_sets(body: str, macros: dict) -> list[PaperFigure]:
    """AASTeX figure sets: one figure per ``\\figsetgrpstart`` … ``\\figsetgrpend`` group."""
    out: list[PaperFigure] = []
    for set_m in re.finditer(r"\\figsetstart(?![A-Za-z])(.*?)\\figsetend(?![A-Za-z])", body, re.S):
        block = set_m.group(1)
        set_num = _arg_of(block, "figsetnum")
        set_title = _arg_of(block, "figsettitle")
        for g, grp in enumerate(re.finditer(r"\\figsetgrpstart(?![A-Za-z])(.*?)\\figsetgrpend(?![A-Za-z])", block,
                                            re.S), 1):
            text = expand_macros(grp.group(1), macros)
            num = _arg_of(text, "figsetgrpnum") or f"{set_num}.{g}"
            fig = PaperFigure(key=f"figset{set_num or len(out) + 1}.{g}",
                              extra={"figure_set": {"number": set_num, "title": set_title and to_plain(set_title)}})
            fig.figure_number = num
            fig.graphics = [Graphic(f.strip()) for _, (f,) in command_args(text, "figsetplot", 1, optional=False)]
            title, note = _arg_of(text, "figsetgrptitle"), _arg_of(text, "figsetgrpnote")
            fig.extra["caption_latex"] = ". ".join(p for p in (title, note) if p) or None
            if not fig.graphics:
                fig.error = f"figure set group {num} has no \\figsetplot"
            out.append(fig)
    return out


def _arg_of(text: str, name: str) -> str | None:
    found = command_args(text, name, 1, optional=False)
    return found[0][1][0].strip() if found else None


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` (sorted, not overlapping) replaced by a paragraph break."""
    parts, pos = [], 0
    for start, end in spans:
        parts += [text[pos:start], "\n\n"]
        pos = end
    return "".join(parts) + text[pos:]


def _add_captions_and_context(paper: Paper, body: str, envs: list[Environment], macros: dict,
                              numbers: dict[str, str]) -> None:
    """Plain captions (now that every label has its number) and the paragraphs citing each figure's labels.

    Linear in the text: the figures and headings are cut out in one pass each, the paragraphs are indexed once by
    the labels they cite, and each paragraph is converted to text at most once.
    """
    prose = _cut(body, [(env.start, env.end) for env in envs])  # the figures' own captions are not context
    headings: list[tuple[int, int]] = []
    for m in _SECTION.finditer(prose):  # headings end a paragraph and are not context
        try:
            end = _heading_end(prose, m.start())
        except LatexSyntaxError:
            continue
        if not headings or m.start() >= headings[-1][1]:
            headings.append((m.start(), end))
    prose = expand_macros(_cut(prose, headings), macros)
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", prose) if p.strip()]
    citing: dict[str, list[int]] = {}
    for k, para in enumerate(paragraphs):
        for ref in _CITING_REF.finditer(para):
            for key in {ref.group(1).strip(), *re.split(r"[^\w:.-]+", ref.group(1))}:
                if key and (not citing.get(key) or citing[key][-1] != k):
                    citing.setdefault(key, []).append(k)
    plain: dict[int, str | None] = {}

    def paragraph_text(k: int) -> str | None:
        if k not in plain:
            plain[k] = _plain_or_none(paragraphs[k], numbers, lenient=True)
        return plain[k]

    for fig in paper.figures:
        caption_latex = fig.extra.pop("caption_latex", None)
        try:
            if isinstance(caption_latex, str) and fig.error is None:
                fig.caption = _plain_or_none(caption_latex, numbers)
        except LatexSyntaxError as e:
            fig.error = f"{fig.key}: caption {e}"
        if not fig.labels or fig.error is not None:
            continue
        cited = sorted({k for label in fig.labels for k in citing.get(label, [])})
        fig.context = []
        for k in cited:
            text = paragraph_text(k)
            if text:
                fig.context.append(text)
                if len(fig.context) >= MAX_CONTEXT:
                    break


_CITING_REF = re.compile(r"\\(?:ref|autoref|cref|Cref|vref)\*?\s*\{([^{}]*)\}")


def _plain_or_none(latex: str, numbers: dict[str, str], lenient: bool = False) -> str | None:
    """Plain text or None when empty; ``lenient``: None also when it cannot be converted (a context paragraph)."""
    try:
        plain = to_plain(latex, numbers)
    except LatexSyntaxError:
        if lenient:
            return None
        raise
    return plain or None


def _first_plain(text: str, name: str, macros: dict, numbers: dict[str, str]) -> str | None:
    found = command_args(text, name, 1)
    if not found:
        return None
    try:
        return _plain_or_none(expand_macros(found[0][1][0], macros), numbers)
    except LatexSyntaxError:
        return None


def _sections(body: str, macros: dict) -> list[tuple[int, str, str]]:
    """(position, level, plain title) of each sectioning command."""
    out = []
    for m in _SECTION.finditer(body):
        try:
            _, j = read_optional(body, m.end())
            group = read_group(body, j)
        except LatexSyntaxError:
            continue
        if group is not None:
            out.append((m.start(), m.group(1), to_plain(expand_macros(group[0], macros))))
    return out


def _section_at(sections: list[tuple[int, str, str]], starts: list[int], pos: int) -> str | None:
    k = bisect.bisect_left(starts, pos)
    return sections[k - 1][2] if k else None


def _conclusion(body: str, sections: list[tuple[int, str, str]], macros: dict,
                numbers: dict[str, str]) -> tuple[str | None, str | None]:
    """The text of the conclusion section: "Conclusion(s)" first, then "Summary", then "Discussion"."""
    tops = [s for s in sections if s[1] == "section"]
    for pattern in _CONCLUSION_TITLES:
        for k, (pos, _level, title) in enumerate(tops):
            if re.fullmatch(pattern, title.strip().rstrip("."), re.I):
                end = tops[k + 1][0] if k + 1 < len(tops) else _body_end(body)
                heading_end = _heading_end(body, pos)
                text = body[heading_end:end]
                for stop in ("\\begin{acknowledgments}", "\\acknowledgments", "\\begin{thebibliography}",
                             "\\bibliography", "\\appendix", "\\end{document}"):
                    cut = text.find(stop)
                    if cut >= 0:
                        text = text[:cut]
                return title, _plain_or_none(expand_macros(text, macros), numbers)
    return None, None


def _heading_end(body: str, pos: int) -> int:
    m = _SECTION.match(body, pos)
    assert m is not None
    _, j = read_optional(body, m.end())
    arg = read_arg(body, j)
    return arg[1] if arg else m.end()


def _body_end(body: str) -> int:
    cut = body.find("\\end{document}")
    return cut if cut >= 0 else len(body)
