"""CoT diagnostics per model × prompt: the measurable form of HakushoBench §6.1's manual finding that some models
"often fail to engage in reasoning or produce repetitive and incoherent chains".

Over the model's ok replies with a prompt style (all benchmarks together):

- **truncated**: the reply hit the token limit (``finish_reason`` ``length``);
- **no final answer** (CoT styles only; None for Direct, which asks for none): no ``Answer:``/``答え:``/"The answer
  is" marker followed by text on its line, and no ``\\boxed{}``
  (:func:`~zuhyo.evaluate.judges.answer_extraction.has_final_answer`);
- **looping**: a repeated n-gram span covers a large part of the reply (:func:`loop_coverage` ≥
  :data:`LOOP_MIN_COVERAGE`). Tokens are words (runs of letters and digits) and every other non-space character
  (so each kanji or kana is a token); a token is *covered* when it lies in an n-gram of :data:`LOOP_NGRAM` tokens
  that occurs at least :data:`LOOP_MIN_REPEATS` times in the reply. A sentence repeated until the token limit
  covers nearly all of the reply; a clean chain of thought, even one with a table of similar rows, covers little;
- **median reply length** in characters, and in completion tokens where the server reported usage.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from zuhyo.evaluate.judges.answer_extraction import has_final_answer
from zuhyo.evaluate.records import PredictionRecord

LOOP_NGRAM = 8
"""Length, in tokens, of the n-grams whose repetition marks a loop."""
LOOP_MIN_REPEATS = 3
"""An n-gram counts as repeated from this many occurrences on."""
LOOP_MIN_COVERAGE = 0.5
"""A reply loops when repeated n-grams cover at least this share of its tokens."""
MAX_EXAMPLES = 5
_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+|[^\w\s]|_")


def tokens(text: str) -> list[str]:
    """Words of letters/digits; each kana or kanji and each punctuation mark is a token of its own (Japanese is
    written without spaces)."""
    return _TOKEN.findall(text)


def loop_coverage(text: str, n: int = LOOP_NGRAM, min_repeats: int = LOOP_MIN_REPEATS) -> float:
    """The share of the reply's tokens that lie in an ``n``-gram occurring at least ``min_repeats`` times."""
    toks = tokens(text)
    if len(toks) < n * min_repeats:
        return 0.0
    grams = list(zip(*(toks[i:] for i in range(n)), strict=False))
    counts = Counter(grams)
    repeated = {g for g, c in counts.items() if c >= min_repeats}
    if not repeated:
        return 0.0
    covered = 0
    end = 0  # tokens before ``end`` are already counted
    for i, g in enumerate(grams):
        if g in repeated:
            covered += i + n - max(end, i)
            end = i + n
    return covered / len(toks)


def is_looping(text: str) -> bool:
    return loop_coverage(text) >= LOOP_MIN_COVERAGE


def _share(k: int, n: int) -> float | None:
    return round(k / n, 6) if n else None


def reply_diagnostics(predictions: Iterable[PredictionRecord]) -> list[dict[str, Any]]:
    """One row per (model, prompt) over the ok predictions: counts, shares, median lengths and example items."""
    groups: dict[tuple[str, str], list[PredictionRecord]] = defaultdict(list)
    for p in predictions:
        if p.status == "ok":
            groups[(p.model, p.prompt)].append(p)
    rows = []
    for (model, prompt), preds in sorted(groups.items()):
        cot = prompt != "direct"
        flagged: dict[str, list[str]] = {"truncated": [], "no_final_answer": [], "looping": []}
        for p in preds:
            text = p.response or ""
            item = f"{p.benchmark}/{p.sample_id} run {p.run_index}"
            if p.finish_reason == "length":
                flagged["truncated"].append(item)
            if cot and not has_final_answer(text):
                flagged["no_final_answer"].append(item)
            if is_looping(text):
                flagged["looping"].append(item)
        n = len(preds)
        tokens_used = [p.usage["completion_tokens"] for p in preds if "completion_tokens" in p.usage]
        row: dict[str, Any] = {"model": model, "prompt": prompt, "n_replies": n}
        for kind, items in flagged.items():
            applicable = cot or kind != "no_final_answer"
            row[f"n_{kind}"] = len(items) if applicable else None
            row[f"{kind}_share"] = _share(len(items), n) if applicable else None
        row["median_reply_chars"] = statistics.median(len(p.response or "") for p in preds) if preds else None
        row["median_completion_tokens"] = statistics.median(tokens_used) if tokens_used else None
        row["examples"] = {k: v[:MAX_EXAMPLES] for k, v in flagged.items() if v}
        rows.append(row)
    return rows


DIAGNOSTICS_NOTE = (f"Share of ok replies that hit the token limit (finish_reason length), that state no final "
                    f"answer (CoT prompts only), and that loop (repeated {LOOP_NGRAM}-token n-grams, each seen "
                    f"≥ {LOOP_MIN_REPEATS} times, cover ≥ {LOOP_MIN_COVERAGE:.0%} of the reply); median reply "
                    f"length in characters (and completion tokens where reported). HakushoBench §6.1.")
