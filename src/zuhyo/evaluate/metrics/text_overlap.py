"""ROUGE-L and BLEU-4 for open answers (DomainCQA reports both), with a tokenizer that keeps Japanese.

rouge-score's default tokenizer lower-cases and keeps only ``[a-z0-9]`` runs, so any Japanese (or other
non-ASCII) answer becomes an empty token list and scores 0. :func:`tokenize` instead splits every CJK
character (kanji, kana, CJK symbols, full-width forms) into its own token and everything else on word boundaries
(``\\w+`` runs; punctuation dropped), after NFKC and lower-casing. Both metrics use it:

- ``rouge_l``: rouge-score's ``RougeScorer(["rougeL"], tokenizer=…)`` F-measure, best over references;
- ``bleu4``: sacrebleu sentence BLEU (4-gram, uniform weights, brevity penalty, sacrebleu's default ``exp``
  smoothing, ``effective_order`` as sacrebleu recommends for sentences) over the pre-tokenised text joined by
  spaces with ``tokenize="none"``, all references at once, divided by 100 to lie in [0, 1]. Character tokens
  for Japanese match sacrebleu's ``char`` scheme on Japanese while English words stay words (``char`` would
  score English by letters; ``ja-mecab`` needs MeCab and a dictionary).
"""

from __future__ import annotations

import re
import unicodedata

from zuhyo.evaluate.metrics.base import METRICS
from zuhyo.schema import Sample

_TOKEN = re.compile(
    r"[\u2e80-\u2fff\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    r"\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]|[^\W\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+")


def tokenize(text: str) -> list[str]:
    """CJK characters one by one, other text as lower-cased word runs (punctuation dropped)."""
    t = unicodedata.normalize("NFKC", text).lower()
    return [tok for tok in _TOKEN.findall(t) if not (len(tok) == 1 and unicodedata.category(tok).startswith("P"))]


class JapaneseAwareTokenizer:
    """The object rouge-score's ``RougeScorer(tokenizer=...)`` expects."""

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text)


def rouge_l_f(reference: str, prediction: str) -> float:
    """ROUGE-L F-measure of one prediction against one reference, with :func:`tokenize`."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=JapaneseAwareTokenizer())
    return float(scorer.score(reference, prediction)["rougeL"].fmeasure)


def bleu4(references: list[str], prediction: str) -> float:
    """Sentence BLEU-4 in [0, 1] over :func:`tokenize` tokens (sacrebleu, tokenize='none')."""
    from sacrebleu.metrics import BLEU

    hyp = " ".join(tokenize(prediction))
    refs = [" ".join(tokenize(r)) for r in references]
    bleu = BLEU(tokenize="none", effective_order=True)
    # sacrebleu can return 100.00000000000004 for an exact match; keep the score inside [0, 1].
    return min(1.0, float(bleu.sentence_score(hyp, refs).score) / 100.0)


@METRICS.register("rouge_l", "ROUGE-L F (rouge-score) with a tokenizer that keeps Japanese (CJK per character); "
                             "best over references")
def rouge_l(sample: Sample, response: str) -> float:
    return max(rouge_l_f(ref, response) for ref in sample.answers)


@METRICS.register("bleu4", "sentence BLEU-4 (sacrebleu, exp smoothing) over Japanese-aware tokens, in [0, 1]")
def bleu4_metric(sample: Sample, response: str) -> float:
    return bleu4(list(sample.answers), response)
