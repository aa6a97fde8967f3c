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

**Hand-labelled pairs** (``bench/judge_pairs_ja.jsonl``, issue 21): Japanese white-paper-style questions with
model-like answers written for this bench (not the unit tests' cases) and a verdict labelled by hand: surface
variants, magnitudes, hedges (約, 程度), alternatives (3か4), ranges, sentences, English answers, derivations.
Each row has ``split``: ``tune`` (rules were developed against it) or ``heldout`` (never looked at while tuning);
both are reported separately: accuracy on decided pairs, coverage (decided share) and the number of false
"correct" verdicts (a wrong answer called correct: the worst error a judge can make).

CoT kinds reach the judge as the scoring stage passes them (``--answer-cleaning faithful``, the default), the
others as given. Prints, per pair kind and overall: decided share, accuracy on decided pairs, undecided count; with
``--llm SPEC`` (an OpenAI-compatible endpoint, e.g. ``openai:gpt-5.1@https://…/v1``) also the LLM judge's
accuracy and Cohen's kappa between rules and LLM on the pairs rules decided.

    python bench/judge_agreement.py [--llm openai:<model>@<url>] [--answer-cleaning lenient] [--json]
        [--pairs bench/judge_pairs_ja.jsonl] [--show-errors]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from zuhyo.benchmarks.base import load_benchmark
from zuhyo.evaluate.judges.answer_extraction import scored_answer
from zuhyo.evaluate.judges.base import JudgeInput, JudgeOptions, build_judge
from zuhyo.evaluate.prompting import prompt_family
from zuhyo.schema import Sample

PAIRS = Path(__file__).with_name("judge_pairs_ja.jsonl")


def load_labelled(path: Path) -> list[dict[str, str]]:
    """The hand-labelled pairs: id, split (tune | heldout), question, reference, response, label, prompt."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        if r["label"] not in ("correct", "incorrect") or r["split"] not in ("tune", "heldout"):
            raise ValueError(f"{path}: bad label or split in {r['id']}")
    return rows


def labelled_figures(rows: list[dict[str, str]], verdicts: list[str]) -> dict[str, dict[str, float | int | None]]:
    """Per split and overall: pairs, decided, coverage, accuracy on decided, false 'correct' and 'incorrect'."""
    out: dict[str, dict[str, float | int | None]] = {}
    for split in ("tune", "heldout", "all"):
        pick = [(r, v) for r, v in zip(rows, verdicts, strict=True) if split in ("all", r["split"])]
        decided = [(r, v) for r, v in pick if v in ("correct", "incorrect")]
        right = sum(v == r["label"] for r, v in decided)
        out[split] = {"pairs": len(pick), "decided": len(decided),
                      "coverage": round(len(decided) / len(pick), 4) if pick else None,
                      "accuracy_on_decided": round(right / len(decided), 4) if decided else None,
                      "false_correct": sum(v == "correct" and r["label"] == "incorrect" for r, v in decided),
                      "false_incorrect": sum(v == "incorrect" and r["label"] == "correct" for r, v in decided)}
    return out


async def judge_labelled(spec: str, rows: list[dict[str, str]], cleaning: str = "faithful") -> list[str]:
    """The verdict of judge ``spec`` on each labelled pair (answers cleaned as the scoring stage does)."""
    samples = [Sample(id=r["id"], benchmark="judge-pairs-ja", question=r["question"], answers=[r["reference"]])
               for r in rows]
    pairs = [("cot" if r.get("prompt", "direct") != "direct" else "direct", s, r["response"], r["label"] == "correct")
             for r, s in zip(rows, samples, strict=True)]
    return await judge_all(spec, pairs, cleaning)


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

        async def one(kind: str, s: Sample, response: str) -> str:  # kind "cot…": a CoT reply
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
    ap.add_argument("--pairs", type=Path, default=PAIRS, help="hand-labelled pairs (JSONL)")
    ap.add_argument("--show-errors", action="store_true", help="list the tune split's wrong and undecided pairs")
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
    labelled = load_labelled(args.pairs)
    verdicts = asyncio.run(judge_labelled("rules", labelled, args.answer_cleaning))
    result["labelled"] = labelled_figures(labelled, verdicts)
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
    print(f"\nhand-labelled pairs ({args.pairs.name}), rules judge:")
    print(f"{'split':<9}{'pairs':>7}{'decided':>9}{'coverage':>10}{'acc(decided)':>14}{'false correct':>15}"
          f"{'false incorrect':>17}")
    for split, f in result["labelled"].items():
        print(f"{split:<9}{f['pairs']:>7}{f['decided']:>9}{f['coverage']:>10.3f}{f['accuracy_on_decided']:>14.3f}"
              f"{f['false_correct']:>15}{f['false_incorrect']:>17}")
    if args.show_errors:  # the tune split only: the held-out split is not looked at while tuning
        for r, v in zip(labelled, verdicts, strict=True):
            if r["split"] == "tune" and v != r["label"]:
                print(f"  {r['id']} {v:<10} label={r['label']:<10} {r['reference']!r} vs {r['response']!r}")
    if "llm" in result:
        print(f"llm: {result['llm']}")
    if args.json:
        print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
