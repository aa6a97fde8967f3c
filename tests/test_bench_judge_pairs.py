"""The hand-labelled pairs of bench/judge_agreement.py (issue 21): well-formed, and not the unit tests' cases."""

from __future__ import annotations

import ast
import json

from conftest import ROOT

PAIRS = ROOT / "bench" / "judge_pairs_ja.jsonl"


def _rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_pairs_are_labelled_split_and_unique() -> None:
    rows = _rows()
    assert len(rows) >= 150
    assert {r["label"] for r in rows} == {"correct", "incorrect"}
    assert {r["split"] for r in rows} == {"tune", "heldout"}
    assert sum(r["split"] == "heldout" for r in rows) >= 50
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({(r["question"], r["reference"], r["response"]) for r in rows}) == len(rows)


def test_pairs_are_not_the_unit_tests_cases() -> None:
    answers: set[tuple[str, str]] = set()
    for path in (ROOT / "tests").glob("test_judge_rules*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple) and len(node.elts) >= 3 and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts[:3]):
                answers.add((node.elts[1].value, node.elts[2].value))  # type: ignore[attr-defined]
    shared = [r["id"] for r in _rows() if (r["reference"], r["response"]) in answers]
    assert not shared, f"bench pairs that are unit-test cases: {shared}"
