"""Matchers for blind verification: the existing judges compare the verifier's answer with the reference
(HakushoBench §3.3: "match up to minor surface variations")."""

from __future__ import annotations

from zuhyo.annotate.workflow import Matcher, MatchOutcome


def rules_matcher(question: str, reference: str, answer: str) -> MatchOutcome:
    """The ``rules`` judge: correct → match, incorrect → mismatch, undecided → undecided."""
    raise NotImplementedError


def judge_matcher(spec: str) -> Matcher:
    """A matcher from a judge spec (``rules``, ``cascade:<model spec>``, ``llm:<model spec>``)."""
    raise NotImplementedError
