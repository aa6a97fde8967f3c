"""`zuhyo draft --mix`: DomainCQA Table 1's question mix as a plan (pure allocation), FQA and AQA charts disjoint
(DomainCQA §4.1), and the plan beside the realised counts in the dataset card."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from zuhyo.construct.qa.draft_mix import TABLE1_AQA, TABLE1_FQA, plan_mix, scaled_counts

FQA_KINDS = list(TABLE1_FQA)


def test_table1_at_the_papers_size_is_table1():
    plan = plan_mix(range(303), FQA_KINDS, "table1", seed=0, paper=TABLE1_FQA, paper_charts=303)
    assert plan.counts == TABLE1_FQA and sum(plan.counts.values()) == 1509
    given = Counter(k for kinds in plan.per_chart.values() for k in kinds)
    assert dict(given) == TABLE1_FQA  # the allocation realises the plan exactly
    for kinds in plan.per_chart.values():
        assert len(kinds) == len(set(kinds))  # no chart gets a kind twice
    loads = [len(k) for k in plan.per_chart.values()]
    assert max(loads) - min(loads) <= 1 and len(plan.per_chart) == 303  # 1509 / 303: 4 or 5 per chart
    aqa = plan_mix(range(257), list(TABLE1_AQA), "table1", seed=0, paper=TABLE1_AQA, paper_charts=257)
    assert aqa.counts == {"AQA-KB-Inference": 200, "AQA-KB-Summary": 181}


def test_table1_scaled_keeps_the_shape_and_is_reproducible():
    counts = scaled_counts(TABLE1_FQA, 303, 30)
    assert sum(counts.values()) == round(1509 * 30 / 303) == 149
    assert counts["FQA-Visual:Layout"] < counts["FQA-Data:Calculation"] < counts["FQA-Summary"] <= 30
    assert counts["FQA-Visual:Layout"] == 4 and counts["FQA-Summary"] == 30  # 45 * 149/1509 = 4.4; 29.8 -> 30
    a = plan_mix(range(100, 130), FQA_KINDS, "table1", seed=1, paper=TABLE1_FQA, paper_charts=303)
    b = plan_mix(range(100, 130), FQA_KINDS, "table1", seed=1, paper=TABLE1_FQA, paper_charts=303)
    c = plan_mix(range(100, 130), FQA_KINDS, "table1", seed=2, paper=TABLE1_FQA, paper_charts=303)
    assert a == b and a.per_chart != c.per_chart and a.counts == c.counts == counts
    every = plan_mix([3, 1], FQA_KINDS, "every", seed=0)
    assert every.per_chart == {1: FQA_KINDS, 3: FQA_KINDS} and every.counts["FQA-Visual:Layout"] == 2
    with pytest.raises(ValueError, match="--mix must be one of every, table1"):
        plan_mix([1], FQA_KINDS, "table9", seed=0)
    # one chart: 5 questions (1509/303), the kinds with the largest shares by largest remainders
    one = scaled_counts(TABLE1_FQA, 303, 1)
    assert {k for k, v in one.items() if v} == {"FQA-Summary", "FQA-Inference", "FQA-Visual:Text",
                                                "FQA-Visual:Color", "FQA-Visual:Style"}
    assert max(one.values()) == 1


pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")


def add_abstracts(ws: Path, figure_ids: tuple[int, ...]) -> None:
    """Each figure becomes the chart abstract (a majority outcome) of a paper of its own."""
    from zuhyo.construct.workspace import Workspace
    from zuhyo.construct.workspace.qa_tables import AbstractOutcome
    from zuhyo.construct.workspace.records import get_or_create_document
    from zuhyo.construct.workspace.tables import FigureRow

    with Workspace.open(ws) as w, w.db.write() as s:
        for fid in figure_ids:
            fig = s.get(FigureRow, fid)
            doc, _ = get_or_create_document(s, 1, f"paper-{fid}", title=f"Paper {fid}")
            doc.meta = {"title": f"Paper {fid}", "abstract": "An abstract.", "conclusion": "A conclusion."}
            s.flush()
            fig.document_id = doc.id
            s.add(AbstractOutcome(document_id=doc.id, outcome="majority", figure_id=fid, votes={"a": fid}))


def test_draft_mix_table1_disjoint_sets_and_card(tmp_path: Path, fake_server):
    from conftest import run_cli_json
    from test_construct_draft import VALID, K, items, make_ws

    from zuhyo.construct.publish.card import mix_section
    from zuhyo.construct.qa.drafting import run_drafting
    from zuhyo.construct.workspace import Workspace
    from zuhyo.testing.scripted import ScriptedBackend

    # 12 figures: 1..8 sampled, 8..10 chart abstracts of three papers (8 is both: left out of FQA by default)
    ws = make_ws(tmp_path, 12, sample=tuple(range(1, 9)))
    add_abstracts(ws, (8, 9, 10))
    server = fake_server(answers={K[k]: v for k, v in VALID.items()})
    spec = f"openai:m1@{server.base_url}"
    report = run_cli_json("draft", str(ws), "--model", spec, "--style", "astro", "--mix", "table1", "--seed", "4")
    assert report["mix"] == "table1" and report["abstracts_left_out"] == 1 and report["errors"] == 0
    fqa_plan, aqa_plan = report["planned"]["FQA"], report["planned"]["AQA"]
    assert sum(fqa_plan.values()) == round(1509 * 7 / 303) == 35  # 7 FQA charts (1..7)
    assert aqa_plan == {"AQA-KB-Inference": 2, "AQA-KB-Summary": 2}  # 381 * 3/257 = 4.4 -> 4
    rows = items(ws)
    asked = Counter(r["item_key"].split("/")[3] for r in rows)
    assert sum(asked.values()) == 35 + 4
    fqa_figs = {r["figure_id"] for r in rows if r["category"].startswith("FQA")}
    aqa_figs = {r["figure_id"] for r in rows if r["category"].startswith("AQA")}
    assert fqa_figs <= set(range(1, 8)) and aqa_figs <= {8, 9, 10} and not fqa_figs & aqa_figs
    assert dict(asked) == {k: v for k, v in {**fqa_plan, **aqa_plan}.items() if v}  # the plan, realised
    again = run_cli_json("draft", str(ws), "--model", spec, "--style", "astro", "--mix", "table1", "--seed", "4")
    assert again["drafted"] == 0 and again["skipped_existing"] == 39  # the same seed: the same plan, nothing asked
    # --overlap: the abstract that was sampled gets FQA kinds too
    ws2 = make_ws(tmp_path / "two", 3, sample=(1, 2))
    add_abstracts(ws2, (2,))
    replies = [VALID["Summary"]] * 30
    with Workspace.open(ws2) as w:  # an FQA-only run leaves the chart abstract out too (a later AQA run would clash)
        fqa_only = run_drafting(w, ScriptedBackend(*replies, spec="fake:fqa"), "astro", categories=["FQA-Summary"])
    assert fqa_only.abstracts_left_out == 1 and [r["figure_id"] for r in items(ws2)] == [1]
    with Workspace.open(ws2) as w:
        both = run_drafting(w, ScriptedBackend(*replies, spec="fake:mix"), "astro", overlap=True, concurrency=1,
                            categories=["FQA-Summary", "AQA-KB-Summary"])
    assert both.abstracts_left_out == 0 and both.figures == 2
    assert sorted((r["figure_id"], r["category"]) for r in items(ws2) if r["model"] == "fake:mix") == [
        (1, "FQA-Summary"), (2, "AQA-KB-Summary"), (2, "FQA-Summary")]
    # the card: Table 1 beside the plan and the exported counts
    from zuhyo.construct.qa.items import qa_item_to_sample
    from zuhyo.construct.workspace.qa_tables import QAItemRow
    from zuhyo.construct.workspace.tables import FigureRow

    with Workspace.open(ws) as w, w.db.read() as s:
        samples = [qa_item_to_sample(r, s.get(FigureRow, r.figure_id), None) for r in s.query(QAItemRow).all()
                   if r.aspect is None]  # open answers need no axis
    md = mix_section({"mix": "table1", "planned": report["planned"]}, samples)
    assert "`zuhyo draft --mix table1`" in md
    summary = next(line for line in md.splitlines() if line.startswith("| FQA-Summary |"))
    assert summary == f"| FQA-Summary | 302 | {fqa_plan['FQA-Summary']} | {asked['FQA-Summary']} |"
    assert mix_section(None, []) == ""
