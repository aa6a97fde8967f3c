"""Deterministic value extraction for AstroChart numeric items (DomainCQA Appendix G.1, Algorithm 3 step 4).

Algorithm 3 starts with "Extract numerical values from both Reference and Prediction", and for data derivation
"an LLM extracts numerical values". With ``astrochart:<model spec>`` an LLM does that
(:mod:`zuhyo.evaluate.judges.value_extractor`); this module is the extractor used without a model, and the
first guess recorded beside the LLM's. It does not read every number in the reply:

- **Final answer first.** The line after the last ``Answer:`` marker (or ``\\boxed{}``) when there is one and it
  holds a value; otherwise the whole reply.
- **Scientific notation** in its written forms: ``2.1×10^4``, ``2.1 x 10^{4}``, ``2.1e4``, ``2.1 × 10⁴``,
  ``$2.1\\times10^{4}$``, ``10^{-3}``; thousands separators (``21,000``); Unicode minus.
- **Units stay with their number** (``21,000 km/s``, ``2.1×10^4 km s^-1`` is one value, not 21000 and −1), so a
  value can be compared with a reference in another unit (:mod:`zuhyo.evaluate.judges.astro_units`), and a value
  restated in another unit in parentheses counts once (``1 kpc (1000 pc)``).
- **Identifiers are not values**: digits glued to letters (``Δm15(B)``, ``M31``, ``SN1987A``, ``log10``),
  catalogue and figure names (``NGC 4258``, ``HD 209458``, ``Figure 3``, ``panel 2``), spectral lines with their
  wavelength (``H-alpha 6563 Å``, ``[O III] 5007``, unless the question asks for a wavelength), uncertainties
  (``± 0.2``, ``^{+0.3}_{-0.2}``) and list numbers at the start of a line.
- **Counts written as words** (``three curves``, ``twenty-one``; the parser shared with the rules judge,
  :mod:`~zuhyo.evaluate.judges.english_numbers`) are read when the text has no digits ("one of" is not a count).
- **The question's own numbers** (``At 300 Mpc …`` for a question about 300 Mpc) are dropped when enough values
  remain without them.

Counting (Algorithm 3 steps 5–8 act on the extracted values):

- **Fewer values than the reference, or none** (an abstention such as "I cannot read it", or an answer line
  that gives only some of the values) → the values found are returned and scored: Algorithm 3 steps 5–6 give
  0, and exact matching (data derivation) gives 0. An ``Answer:`` line without a value is passed over for the
  whole reply unless it abstains.
- In the final-answer line every value counts, so a range answers one reference with two values (their mean is
  scored) and "3 or 4" for a count of 3 is not an exact match.
- In free text the extractor must isolate exactly as many values as the reference has (or a single range for
  one reference); when it finds more, the item is **undecided** — unscored without a model, never 0.
- **Derivation items** (``derivation=True``; DomainCQA G.1 "an LLM extracts numerical values" for data derivation):
  a segment with an ``=`` (or ≈) is read after its last one, up to the end of that sentence —
  ``Answer: 6000 K - 4500 K = 1500 K`` → 1500 K, not three values. When that part holds a different number of
  values than the reference, the item is undecided (never 0 for a result the rules could not isolate).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from zuhyo.evaluate.judges.abstention import is_abstention
from zuhyo.evaluate.judges.answer_extraction import clean_answer, extract_final_answer, normalize_text
from zuhyo.evaluate.judges.astro_units import UNIT, Unit, convert, parse_unit
from zuhyo.evaluate.judges.english_numbers import find_number_words

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_LATEX = [(r"\\times", "×"), (r"\\cdot", "·"), (r"\\AA\b", "Å"), (r"\\odot", "⊙"), (r"\\sun", "⊙"),
          (r"\\alpha", "α"), (r"\\beta", "β"), (r"\\gamma", "γ"), (r"\\Delta", "Δ"), (r"\\mu", "μ"),
          (r"\\lambda", "λ"), (r"\\pm", "±"), (r"\\(?:sim|approx|simeq)", "~"), (r"\\[,;:! ]", " "),
          (r"\\(?:mathrm|rm|text|textrm|mbox|mathit)\s*", ""), (r"_\{?\\?⊙\}?|_⊙", "⊙"), (r"~", " ")]

_RANGE_SEP = re.compile(r"^\s*(?:-|to|and|until|through|[–—~])\s*$", re.IGNORECASE)
_RANGE_BEFORE = re.compile(r"(?:between|from|range(?:s)?(?: of| from)?)\s*$", re.IGNORECASE)
_PAREN_OPEN = re.compile(r"^\s*\(\s*(?:=|~|≈|i\.e\.,?|or|about|approximately|approx\.?|ca\.?)?\s*$")

_NUMBER = re.compile(
    r"(?:(?<![^\s(\[=:~≈<>,;$])(?P<sign>[-+]))?"
    r"(?<![A-Za-zα-ωΑ-ΩÅ⊙_^{}\]\\\d.])(?<![A-Za-zα-ωΑ-Ω_^{\]][-+])(?<![\^_]\{[-+])"
    r"(?P<mant>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*(?:×|x|\*|·|⋅)\s*10\s*(?:\^|\*\*)\s*\{?\s*(?P<exp>[-+]?\d+)\s*\}?"
    r"|(?<=10)\s*\^\s*\{?\s*(?P<pow>[-+]?\d+)\s*\}?"
    r"|[eE](?P<eexp>[-+]?\d+))?"
    r"(?![\d])(?!\.\d)"
    rf"(?:\s?(?P<unit>{UNIT}))?")

_CATALOGUE = re.compile(
    r"(?<![A-Za-z])(?:NGC|IC|UGC|PGC|HD|HR|HIP|TYC|GJ|Gliese|Kepler|KOI|K2|TOI|WASP|HAT-P|CoRoT|SN|GRB|FRB|PSR|"
    r"SGR|3C|4C|Mrk|Arp|Abell|ESO|SDSS|2MASS|Gaia|[Ff]ig(?:ure|\.)?|[Pp]anel|[Tt]able|[Ee]q(?:uation|\.)?|"
    r"[Ss]ect(?:ion|\.)?|[Ss]tep|[Aa]ppendix|[Cc]olumn|[Rr]ow|[Ll]ine|[Ss]ource|[Oo]bject|[Rr]un|[Mm]odel|"
    r"[Cc]ase|[Ss]ample|[Bb]in|[Cc]urve|[Ss]eries|[Gg]roup|[Cc]lass|[Tt]ype)\s?[-#]?\s?(?=\d)"
    r"|(?<![A-Za-z])M\s(?=\d{1,3}\b)")
_LINE_NAME = re.compile(
    r"(?<![A-Za-z])(?:(?:H|Ly|Pa|Br|Pf)\s?-?\s?(?:alpha|beta|gamma|delta|epsilon|α|β|γ|δ|ε)"
    r"|\[?(?:He|Ne|Na|Mg|Al|Si|Ar|Ca|Fe|Ni|Ti|Cr|Mn|H|C|N|O|S|K)\s?(?:I{1,3}|IV|VI{0,3}|IX|X)\]?)"
    r"(?![A-Za-z])\s?(?:λ\s?)?(?=\d)")
_UNCERTAINTY = re.compile(r"±\s*")
_LIST_NUMBER = re.compile(r"^\s*\d+[.)]\s+(?=\D)", re.MULTILINE)
_EQUALS = re.compile(r"[=≈]")
_SENTENCE_END = re.compile(r"\n|[.;](?=\s|$)")
_ASKED_UNIT = re.compile(rf"(?:\(|\[|\bin\s+(?:units\s+of\s+)?)\s*(?P<unit>{UNIT})\s*(?:\)|\]|[?.,]|\s*$)")


@dataclass(frozen=True)
class Quantity:
    """A number read from text, with the unit written after it (None when there is none)."""

    value: float
    unit: Unit | None = None
    start: int = 0
    end: int = 0

    def __str__(self) -> str:
        v = f"{self.value:g}"
        return f"{v} {self.unit.canonical}" if self.unit else v

    def in_unit(self, unit: Unit | None) -> float:
        """The value expressed in ``unit`` when both units are known and convertible, else as written."""
        if unit is None or self.unit is None:
            return self.value
        converted = convert(self.value, self.unit, unit)
        return self.value if converted is None else converted


@dataclass(frozen=True)
class Extraction:
    """What the extractor isolated: the values (None = undecided) and how."""

    values: tuple[Quantity, ...] | None
    source: str
    """``answer line``, ``response`` or ``llm``."""
    reason: str = ""

    @property
    def decided(self) -> bool:
        return self.values is not None


def prepare(text: str) -> str:
    """Superscripts to ``^{…}`` (before NFKC turns ``10⁴`` into ``104``), NFKC, Unicode minus, LaTeX commands."""
    t = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", lambda m: "^{" + m.group(0).translate(_SUPERSCRIPT) + "}", text)
    t = unicodedata.normalize("NFKC", t.replace("\u212b", "Å"))
    t = t.replace("\u2212", "-").replace("\u2012", "-").replace("☉", "⊙").replace("$", " ")
    for pattern, repl in _LATEX:
        t = re.sub(pattern, repl, t)
    return re.sub(r"[ \t]*\^", "^", re.sub(r"[ \t]+", " ", t))


def _masked(text: str, keep_lines: bool) -> str:
    """``text`` with identifier digits replaced by ``#`` (same length, so spans stay valid)."""
    out = list(text)

    def mask(start: int, end: int) -> None:
        for i in range(start, end):
            if out[i].isdigit():
                out[i] = "#"

    patterns = [_CATALOGUE, _UNCERTAINTY, _LIST_NUMBER] + ([] if keep_lines else [_LINE_NAME])
    for pattern in patterns:
        for m in pattern.finditer(text):
            n = re.match(r"[-+]?\d+(?:[.,]\d+)*(?:[A-Za-z]\b)?(?:\s?(?:Å|A|nm|μm|um)\b)?", text[m.end():])
            mask(m.end(), m.end() + (n.end() if n else 0))
    return "".join(out)


def find_quantities(text: str, *, keep_line_wavelengths: bool = False) -> list[Quantity]:
    """Every value in ``text`` (already :func:`prepare`-d) with its unit, identifiers and uncertainties left out."""
    masked = _masked(text, keep_line_wavelengths)
    found: list[Quantity] = []
    for m in _NUMBER.finditer(masked):
        value = float(m.group("mant").replace(",", ""))
        try:
            if m.group("exp"):
                value *= 10.0 ** int(m.group("exp"))
            elif m.group("pow"):
                value **= int(m.group("pow"))
            elif m.group("eexp"):
                value *= 10.0 ** int(m.group("eexp"))
        except OverflowError:  # "3e577" (an id, a hash): no finite number, not a value
            continue
        if m.group("sign") == "-":
            value = -value
        unit = parse_unit(m.group("unit")) if m.group("unit") else None
        if unit is None:  # "21000 ± 500 km/s": the unit comes after the uncertainty
            after = re.match(rf"\s*±\s*[\d#.,]+\s?(?P<unit>{UNIT})", masked[m.end():])
            unit = parse_unit(after.group("unit")) if after else None
        if math.isfinite(value):
            found.append(Quantity(value, unit, m.start(), m.end()))
    return _merge_restatements(text, found)


def _same_quantity(a: Quantity, b: Quantity) -> bool:
    if a.unit is not None and b.unit is not None:
        converted = convert(a.value, a.unit, b.unit)
        return converted is not None and math.isclose(converted, b.value, rel_tol=0.01)
    return math.isclose(a.value, b.value, rel_tol=1e-9)


def _merge_restatements(text: str, found: list[Quantity]) -> list[Quantity]:
    """``1 kpc (1000 pc)``, ``21,000 (2.1e4) km/s``: a value restated in parentheses counts once."""
    out: list[Quantity] = []
    for q in found:
        if out and _PAREN_OPEN.match(text[out[-1].end:q.start]) and re.match(r"\s*\)", text[q.end:]) \
                and _same_quantity(out[-1], q):
            prev = out[-1]
            out[-1] = Quantity(prev.value, prev.unit or q.unit, prev.start, prev.end)
            out.append(Quantity(q.value, q.unit, -1, -1))  # the restatement: kept aside, marked by start −1
            continue
        out.append(q)
    return out


def _pick_restatement(found: list[Quantity], unit: Unit | None) -> list[Quantity]:
    """Of each value and its parenthesised restatement keep the one in ``unit`` (else the first)."""
    out: list[Quantity] = []
    for q in found:
        if q.start == -1:
            if unit is not None and q.unit is not None and q.unit.canonical == unit.canonical:
                out[-1] = q
            continue
        out.append(q)
    return out


def question_unit(question: str) -> Unit | None:
    """The unit a question asks for: ``(km/s)``, ``[Mpc]``, ``in units of M⊙``, ``in kpc``."""
    m = _ASKED_UNIT.search(prepare(question))
    return parse_unit(m.group("unit")) if m else None


def reference_quantities(answer: str) -> list[Quantity]:
    """The values of a reference answer (every value counts; restatements once)."""
    return _pick_restatement(find_quantities(prepare(answer), keep_line_wavelengths=True), None)


def _restates(q: Quantity, asked: list[Quantity]) -> bool:
    for a in asked:
        same_unit = q.unit is None or a.unit is None or q.unit.canonical == a.unit.canonical
        if same_unit and math.isclose(q.value, a.value, rel_tol=1e-9, abs_tol=1e-12):
            return True
    return False


def _is_range(text: str, values: list[Quantity]) -> bool:
    """Two values written as a range: ``20–22``, ``20 to 22``, ``between 20 and 22``, ``from 20 to 22``."""
    if len(values) != 2:
        return False
    a, b = values
    between = text[a.end:b.start]
    return bool(_RANGE_SEP.match(between) or (_RANGE_BEFORE.search(text[:a.start])
                                              and re.match(r"^\s*and\s*$", between)))


def _number_words(text: str) -> list[Quantity]:
    """Counts written as words ("There are three curves."), read only when a text has no digits at all."""
    return [Quantity(float(value), None, start, end) for value, start, end in find_number_words(text.lower())]


def _after_last_equals(text: str) -> str | None:
    """The result of a derivation: the text after the last ``=`` (or ≈) up to the end of its sentence; None
    without one."""
    parts = _EQUALS.split(text)
    if len(parts) < 2:
        return None
    end = _SENTENCE_END.search(parts[-1])
    return parts[-1][:end.start()] if end else parts[-1]


def extract_values(response: str, question: str, n_refs: int, unit: Unit | None = None,
                   derivation: bool = False) -> Extraction:
    """The values ``response`` gives as its answer, for a reference with ``n_refs`` values (see module doc);
    ``derivation`` reads the value after the last ``=`` (data derivation items)."""
    if n_refs < 1:
        raise ValueError("the reference has no value")
    asks_wavelength = bool(re.search(r"wavelength|λ|lambda", question, re.IGNORECASE))
    asked = find_quantities(prepare(question), keep_line_wavelengths=True)
    unit = unit or question_unit(question)
    final = extract_final_answer(response)
    segments: list[tuple[str, str]] = []
    if final.strip() and final.strip() != clean_answer(response.strip()).strip():
        segments.append(("answer line", final))
    segments.append(("response", response))
    for source, segment in segments:
        text = prepare(segment)
        result = _after_last_equals(text) if derivation else None
        if result is not None:
            found = _pick_restatement(find_quantities(result, keep_line_wavelengths=asks_wavelength), unit)
            listed = ", ".join(str(q) for q in found) or "none"
            if len(found) == n_refs:
                return Extraction(tuple(found), source, f"values after the last '=' in the {source}: {listed}")
            return Extraction(None, source, f"found {len(found)} value(s) ({listed}) after the last '=' in the "
                                            f"{source} for {n_refs} reference value(s)")
        found = _pick_restatement(find_quantities(text, keep_line_wavelengths=asks_wavelength), unit)
        if not found and source == "answer line" and not is_abstention(normalize_text(segment)):
            continue
        found = found or _number_words(text)
        kept = [q for q in found if not _restates(q, asked)]
        values = kept if len(kept) >= n_refs else found
        if n_refs == 1 and _is_range(text, values) and values[0].unit is None:  # "20 to 22 km/s"
            values = [Quantity(values[0].value, values[1].unit, values[0].start, values[0].end), values[1]]
        listed = ", ".join(str(q) for q in values) or "none"
        if len(values) < n_refs:  # Algorithm 3 steps 5-6: fewer predicted values than reference values
            return Extraction(tuple(values), source, f"found {len(values)} value(s) ({listed}) in the {source} for "
                                                     f"{n_refs} reference value(s): fewer values score 0 "
                                                     "(Algorithm 3 steps 5-6)")
        if source == "answer line" or len(values) == n_refs or (n_refs == 1 and _is_range(text, values)):
            return Extraction(tuple(values), source, f"values from the {source}: {listed}")
        return Extraction(None, source, f"cannot isolate {n_refs} value(s) among {len(values)} in the {source} "
                                        f"({listed})")
    return Extraction(None, "response", "no value in the response")  # pragma: no cover - the loop returns
