"""How far the `rules` judge agrees with the truth — and with an LLM judge when one is reachable.

Pairs are built from the bundled benchmarks (sample-ja, sample-astro choice/numeric items) with a known verdict:

- ``same``: the reference itself;                          truth = correct
- ``alt``: each alternative reference notation (e.g. 平成7年 for 1995年, 12,345 for 1万2,345); truth = correct
- ``sentence``: the reference inside a sentence (「答えは…です。」 / "The answer is …."); truth = correct
- ``cot``: a CoT reply ending in "Answer: <reference>";    truth = correct
- ``cot_trailer``: "Answer: <reference>" followed by a line of another value after a 回答：/"The answer is"
  marker (simple-evals-mm reads the last ``Answer:``);     truth = correct
- ``abstain``: わかりません / "I don't know.";               truth = incorrect
- ``wrong_number``: every number in the reference changed;  truth = incorrect
- ``wrong_other``: another sample's reference;              truth = incorrect

CoT kinds reach the judge as the scoring stage passes them (``--answer-cleaning faithful``, the default), the
others as given. Prints, per pair kind and overall: decided share, accuracy on decided pairs, undecided count; with
``--llm SPEC`` (an OpenAI-compatible endpoint, e.g. ``openai:gpt-5.1@https://…/v1``) also the LLM judge's
accuracy and Cohen's kappa between rules and LLM on the pairs rules decided.

    python bench/judge_agreement.py [--llm openai:<model>@<url>] [--answer-cleaning lenient] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections import Counter, defaultdict

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.evaluate.judges.answer_extraction import scored_answer
from zuhyo.evaluate.judges.base import JudgeInput, JudgeOptions, build_judge
from zuhyo.evaluate.prompting import prompt_family
from zuhyo.schema import Sample


def _bump_numbers(text: str) -> str | None:
    out, n = re.subn(r"\d+(?:\.\d+)?", lambda m: str(int(float(m.group()) * 2 + 3)) if "." not in m.group()
                     else f"{float(m.group()) * 2 + 3:.1f}", text)
    return out if n else None


def build_pairs(samples: list[Sample]) -> list[tuple[str, Sample, str, bool]]:
    """(kind, sample, response, truth) tuples."""
    pairs = []
    for i, s in enumerate(samples):
        ref = s.answer
        ja = bool(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", s.question))
        pairs.append(("same", s, ref, True))
        for alt in s.answers[1:]:
            pairs.append(("alt", s, alt, True))
        pairs.append(("sentence", s, f"答えは{ref}です。" if ja else f"The answer is {ref}.", True))
        pairs.append(("cot", s, f"Reading the chart step by step.\nAnswer: {ref}", True))
        trailer = "回答：（グラフより）" if ja else "The answer is from the chart."
        pairs.append(("cot_trailer", s, f"Reading the chart step by step.\nAnswer: {ref}\n{trailer}", True))
        pairs.append(("abstain", s, "わかりません" if ja else "I don't know.", False))
        bumped = _bump_numbers(ref)
        if bumped and bumped != ref:
            pairs.append(("wrong_number", s, bumped, False))
        other = samples[(i + 7) % len(samples)].answer
        if other != ref:
            pairs.append(("wrong_other", s, other, False))
    return pairs


async def judge_all(spec: str, pairs: list[tuple[str, Sample, str, bool]], cleaning: str = "faithful") -> list[str]:
    judge = build_judge(spec, JudgeOptions())
    try:
        sem = asyncio.Semaphore(16)

        async def one(kind: str, s: Sample, response: str) -> str:
            answer = scored_answer(response, "cot" if kind.startswith("cot") else "direct", prompt_family(s), cleaning)
            async with sem:
                v = await judge.judge(JudgeInput(question=s.question, references=tuple(s.answers),
                                                 response=answer, raw_response=response, sample=s))
                return v.verdict

        return list(await asyncio.gather(*(one(k, s, r) for k, s, r, _ in pairs)))
    finally:
        await judge.aclose()


def cohen_kappa(a: list[bool], b: list[bool]) -> float | None:
    n = len(a)
    if n == 0:
        return None
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return None if pe == 1 else (po - pe) / (1 - pe)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llm", help="model spec of an LLM judge to compare with (needs a reachable endpoint)")
    ap.add_argument("--answer-cleaning", choices=["faithful", "lenient"], default="faithful")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    samples = load_benchmark("sample-ja").samples
    samples += [s for s in load_benchmark("sample-astro").samples
                if s.astro and s.astro.answer_kind in ("choice", "numeric_exact")]
    pairs = build_pairs(samples)
    rules = asyncio.run(judge_all("rules", pairs, args.answer_cleaning))
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for (kind, _, _, truth), v in zip(pairs, rules, strict=True):
        if v in ("correct", "incorrect"):
            by_kind[kind]["right" if (v == "correct") == truth else "wrong"] += 1
        else:
            by_kind[kind]["undecided"] += 1
    rows = {}
    for kind, c in sorted(by_kind.items()):
        decided = c["right"] + c["wrong"]
        rows[kind] = {"pairs": decided + c["undecided"], "decided": decided, "undecided": c["undecided"],
                      "accuracy_on_decided": round(c["right"] / decided, 4) if decided else None}
    tot = Counter()
    for c in by_kind.values():
        tot.update(c)
    decided = tot["right"] + tot["wrong"]
    result = {"samples": len(samples), "pairs": len(pairs), "by_kind": rows,
              "rules": {"decided_share": round(decided / len(pairs), 4),
                        "accuracy_on_decided": round(tot["right"] / decided, 4) if decided else None,
                        "undecided": tot["undecided"]}}
    if args.llm:
        llm = asyncio.run(judge_all(f"llm:{args.llm}", pairs, args.answer_cleaning))
        both = [(r == "correct", m == "correct") for r, m in zip(rules, llm, strict=True)
                if r in ("correct", "incorrect") and m in ("correct", "incorrect")]
        scored = [(m == "correct") == t for (_, _, _, t), m in zip(pairs, llm, strict=True)
                  if m in ("correct", "incorrect")]
        result["llm"] = {"spec": args.llm, "scored": len(scored),
                         "accuracy": round(sum(scored) / len(scored), 4) if scored else None,
                         "kappa_rules_vs_llm": cohen_kappa([a for a, _ in both], [b for _, b in both]),
                         "agreement_rules_vs_llm": round(sum(a == b for a, b in both) / len(both), 4) if both else None}
    print(f"{len(samples)} samples, {len(pairs)} pairs")
    print(f"{'kind':<14}{'pairs':>7}{'decided':>9}{'undecided':>11}{'acc(decided)':>14}")
    for kind, r in rows.items():
        acc = "—" if r["accuracy_on_decided"] is None else f"{r['accuracy_on_decided']:.3f}"
        print(f"{kind:<14}{r['pairs']:>7}{r['decided']:>9}{r['undecided']:>11}{acc:>14}")
    print(f"rules overall: decided {result['rules']['decided_share']:.1%}, accuracy on decided "
          f"{result['rules']['accuracy_on_decided']}")
    if "llm" in result:
        print(f"llm: {result['llm']}")
    if args.json:
        print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
