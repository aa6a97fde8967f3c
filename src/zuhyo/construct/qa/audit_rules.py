"""The quality audit's three flag rules, as pure functions over the models' judged answers to one QA item.

The audit (:mod:`zuhyo.construct.qa.audit`) asks every model of a panel each question twice: without the image (the
*text-only probe*) and with it, judges every answer against the item's reference, and judges the with-image
answers against each other (pairwise: one model's answer as the reference of another's, by the same judge). These
rules then decide the flags; each returns a one-line detail when it fires, else None:

- ``text_only`` — HakushoBench §3.2 requirement (a) says a question must need the image. The rule
  (:data:`TEXT_ONLY_RULES`, default ``majority``) counts the blind answers judged *correct* among the blind answers
  the judge decided (correct or wrong; undecided verdicts are left out, failed calls never get here):
  ``any`` — at least one; ``majority`` — more than half of the decided ones; ``all`` — every decided one. At least
  one correct blind answer is needed in every case. A question answered blind may also be in the models'
  training data (a contamination signal).
- ``reference_doubt`` — no model answers correctly with the image, and a group of at least two models whose
  answers all agree with each other pairwise (each pair judged *agree*) is wrong, and that group is more than half
  of the models that gave an answer. The models agree with each other and not with the reference: the reference may
  be wrong.
- ``ambiguity`` — the with-image answers scatter: among at least :data:`MIN_SCATTER_ANSWERS` given answers, the
  share of decided pairs that *disagree* (the pairwise disagreement rate) reaches the threshold (default
  :data:`DEFAULT_SCATTER`, 0.75: three models all different; four models with at most one pair agreeing). Pairs
  the judge leaves undecided are left out, and at least half of all pairs must be decided.

Only *given answers* take part in agreement: replies with outcome ``answered`` (a refusal, an empty or a
truncated reply is no answer: two refusals must not "agree" against a reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

TEXT_ONLY_RULES = ("any", "majority", "all")
DEFAULT_TEXT_ONLY_RULE = "majority"
DEFAULT_SCATTER = 0.75
MIN_SCATTER_ANSWERS = 3


@dataclass(frozen=True)
class JudgedAnswer:
    """One model's answer to one item for one purpose, with the judge's verdict against the reference."""

    model: str
    answer: str | None
    verdict: str | None
    """correct, wrong or undecided; None when not judged (the call failed or the judge failed)."""
    outcome: str
    """answered, refusal, empty, truncated (see :func:`zuhyo.evaluate.runner.reply_outcome`) or error."""

    @property
    def given(self) -> bool:
        """A real answer, which can agree or disagree with another model's."""
        return self.outcome == "answered" and bool((self.answer or "").strip())


Pairs = dict[tuple[str, str], str]
"""``{(model a, model b): agree | disagree | undecided}`` with ``a < b``."""


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def text_only(blind: list[JudgedAnswer], rule: str = DEFAULT_TEXT_ONLY_RULE) -> str | None:
    """The ``text_only`` flag's detail when the blind answers meet ``rule`` (module docstring)."""
    if rule not in TEXT_ONLY_RULES:
        raise ValueError(f"unknown text-only rule {rule!r}; choose from {', '.join(TEXT_ONLY_RULES)}")
    decided = [a for a in blind if a.verdict in ("correct", "wrong")]
    correct = [a for a in decided if a.verdict == "correct"]
    fires = bool(correct) and {"any": True, "majority": len(correct) * 2 > len(decided),
                               "all": len(correct) == len(decided)}[rule]
    if not fires:
        return None
    return (f"{len(correct)} of {len(decided)} models answered correctly without the image "
            f"({', '.join(a.model for a in correct)}; rule {rule})")


def agreeing_group(answers: list[JudgedAnswer], pairs: Pairs) -> list[JudgedAnswer]:
    """The largest group of answers whose every pair agrees (first found among equals; small panels)."""
    for size in range(len(answers), 1, -1):
        for group in combinations(answers, size):
            if all(pairs.get(pair_key(a.model, b.model)) == "agree" for a, b in combinations(group, 2)):
                return list(group)
    return answers[:1]


def reference_doubt(with_image: list[JudgedAnswer], pairs: Pairs) -> str | None:
    """The ``reference_doubt`` flag's detail when agreeing models all miss the reference (module docstring)."""
    if any(a.verdict == "correct" for a in with_image):
        return None
    given = [a for a in with_image if a.given]
    wrong = [a for a in given if a.verdict == "wrong"]
    group = agreeing_group(wrong, pairs)
    if len(group) < 2 or len(group) * 2 <= len(given):
        return None
    return (f"{len(group)} of {len(given)} models agree with each other on {group[0].answer!r} with the image, "
            f"and the judge finds it differs from the reference")


def disagreement(with_image: list[JudgedAnswer], pairs: Pairs) -> tuple[int, int, int]:
    """(disagreeing pairs, decided pairs, all pairs) among the given answers."""
    given = [a for a in with_image if a.given]
    verdicts = [pairs.get(pair_key(a.model, b.model), "undecided") for a, b in combinations(given, 2)]
    decided = [v for v in verdicts if v in ("agree", "disagree")]
    return sum(v == "disagree" for v in decided), len(decided), len(verdicts)


def ambiguity(with_image: list[JudgedAnswer], pairs: Pairs, threshold: float = DEFAULT_SCATTER) -> str | None:
    """The ``ambiguity`` flag's detail when the given answers scatter (module docstring)."""
    given = sum(a.given for a in with_image)
    disagree, decided, total = disagreement(with_image, pairs)
    if given < MIN_SCATTER_ANSWERS or decided * 2 < total or decided == 0 or disagree / decided < threshold:
        return None
    return (f"the models' answers with the image scatter: {disagree} of {decided} pairs disagree "
            f"({disagree / decided:.0%} >= {threshold:.0%}) among {given} answers")
