"""Which prompt template a sample gets, and how the final answer is read back from the reply.

Prompt styles: ``direct`` and ``cot`` (both papers), and the named extra option ``cot+ocr`` (CoT with the
image's OCR text added before the instructions). Families:

- ``hakusho`` (HakushoBench, JGraphQA, sample-ja, Japanese local sets): the authors' wording, Direct =
  question + 「上記の質問に対して、正確かつ簡潔に答えてください。」; CoT asks for a last line 'Answer: $ANSWER'
  (llm-jp/simple-evals-mm, see shared/data/notes/hakushobench_schema.md). The answer is the text after the last
  ``Answer:``.
- ``chartqapro``: per question type, the ChartQAPro paper's Tables 6 (Direct) and 7 (CoT, "The answer is X").
- ``chartqa``, ``charxiv`` (the CharXiv adapter already embeds CharXiv's own response instructions in the
  question), ``astro`` (DomainCQA/AstroChart), ``generic``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zuhyo.prompts import Prompt, load_prompt
from zuhyo.schema import Sample

PROMPT_STYLES = ("direct", "cot", "cot+ocr")

_FAMILY_BY_BENCHMARK = {
    "hakusho": "hakusho", "jgraphqa": "hakusho", "sample-ja": "hakusho",
    "chartqa": "chartqa", "chartqapro": "chartqapro", "charxiv": "charxiv",
    "astrochart": "astro", "sample-astro": "astro",
}
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def prompt_family(sample: Sample) -> str:
    fam = _FAMILY_BY_BENCHMARK.get(sample.benchmark)
    if fam:
        return fam
    if sample.chartqapro is not None:
        return "chartqapro"
    if sample.charxiv is not None:
        return "charxiv"
    if sample.astro is not None:
        return "astro"
    return "hakusho" if _JAPANESE.search(sample.question) else "generic"


@dataclass(frozen=True)
class RenderedPrompt:
    text: str
    template: str
    """Template name(s) used."""
    version: str


def _template(family: str, style: str, sample: Sample) -> Prompt:
    base_style = "cot" if style == "cot+ocr" else style
    if family == "chartqapro":
        qtype = (sample.chartqapro.question_type if sample.chartqapro else "Factoid").lower()
        qtype = {"multi choice": "multi_choice", "mcq": "multi_choice", "fact checking": "fact_checking"}.get(
            qtype, qtype.replace(" ", "_"))
        try:
            return load_prompt(f"eval/chartqapro_{base_style}_{qtype}")
        except FileNotFoundError:
            return load_prompt(f"eval/chartqapro_{base_style}_factoid")
    return load_prompt(f"eval/{family}_{base_style}")


def render_prompt(sample: Sample, style: str, ocr_text: str | None = None) -> RenderedPrompt:
    """The user text for ``sample`` in ``style`` (direct | cot | cot+ocr)."""
    if style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {style!r}; choose from {', '.join(PROMPT_STYLES)}")
    family = prompt_family(sample)
    tpl = _template(family, style, sample)
    text = tpl.render(question=sample.question)
    name, version = tpl.name, tpl.version
    if style == "cot+ocr":
        block = load_prompt("eval/ocr_block_ja" if family == "hakusho" else "eval/ocr_block_en")
        text = block.render(ocr_text=(ocr_text or "").strip() or "(none)") + "\n" + text
        name, version = f"{name}+{block.name}", f"{version}+{block.version}"
    return RenderedPrompt(text=text, template=name, version=version)


def extract_final_answer(response: str, style: str) -> str:
    """The final answer stored with a prediction: the ``lenient`` cleaning of
    :func:`zuhyo.evaluate.judges.answer_extraction.lenient_answer` (for CoT the first line after the last
    ``Answer:``/答え:/回答:/"The answer is"; Markdown and trailing punctuation stripped). Scoring recomputes the
    answer from the full reply with the run's answer cleaning (``faithful`` by default), so this is for display.
    """
    from zuhyo.evaluate.judges.answer_extraction import lenient_answer

    return lenient_answer(response, style)
