"""The quality gates over HTTP (issue 19): every bypass found on the old code, walked as people would, ends in the
documented state — hakusho drafts are never reviewed into the dataset, nobody verifies or reviews what they
revised or were shown the reference of (for every role combination), an unchanged resubmission is refused, an
undecided match and a 1–1 expert split are adjudicated instead of waiting for ever, and the export refuses an
item that did not pass its gates and carries every item's chain of checks."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the [web] extra is needed")
pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("argon2", reason="the [web] extra is needed (argon2-cffi)")

from sqlalchemy import select  # noqa: E402
from test_annotate_app import PASSWORD, Client, _author, _item, make_workspace  # noqa: E402

from zuhyo.annotate.app import create_app  # noqa: E402
from zuhyo.annotate.users import add_user  # noqa: E402
from zuhyo.annotate.web_context import AppSettings  # noqa: E402
from zuhyo.construct.qa.items import add_qa_item, update_qa_item  # noqa: E402
from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.qa_tables import QAItemRow  # noqa: E402
from zuhyo.construct.workspace.tables import FigureRow  # noqa: E402

ROLE_SETS = [list(c) for n in (1, 2, 3) for c in itertools.combinations(("admin", "annotator", "expert"), n)]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gates") / "ws"
    users = {"alice": ["annotator"], "bob": ["annotator"], "dave": ["annotator"], "root": ["admin"],
             "e1": ["expert"], "e2": ["expert"]}
    users.update({"x-" + "-".join(roles): roles for roles in ROLE_SETS})
    make_workspace(root, users).close()
    return root


def _workspace(template: Path, tmp_path: Path, protocol: str = "", drop: tuple[str, ...] = ()) -> Workspace:
    root = tmp_path / "ws"
    shutil.copytree(template, root)
    if protocol:
        with (root / "zuhyo.toml").open("a", encoding="utf-8") as f:
            f.write(f"\n[protocol]\n{protocol}\n")
    ws = Workspace.open(root)
    if drop:
        from zuhyo.annotate.users import deactivate

        for name in drop:
            deactivate(ws.db, name)
    return ws


@pytest.fixture
def ws(template: Path, tmp_path: Path):
    w = _workspace(template, tmp_path, drop=tuple("x-" + "-".join(r) for r in ROLE_SETS))
    yield w
    w.close()


def _draft(ws: Workspace, style: str, n: int = 0) -> int:
    with ws.db.write() as s:
        fig = s.scalars(select(FigureRow).order_by(FigureRow.id)).first()
        assert fig is not None
        row, _ = add_qa_item(s, item_key=f"draft/{fig.id}/{style}/t/m/v1/{n}", figure_id=fig.id, origin="draft",
                             question=f"図で最も大きい値は何%か ({n})", answer="42%", status="draft",
                             actor="zuhyo draft", style=style, model="openai:m", prompt_version="v1",
                             category="FQA-Inference" if style == "astro" else None)
        return row.id


def _state(ws: Workspace, item_id: int) -> str:
    return _item(ws, id=item_id).status


def _no_task(c: Client, page: str) -> bool:
    r = c.take(page)
    return r.status_code == 200 and 'id="no-task"' in r.text


def _review(c: Client, rating: str) -> Any:
    return c.submit("/review", "review-form", "/review", rating=rating, comment="ok")


def _mismatch(app: Any, ws: Workspace) -> int:
    """alice authors, bob answers with a different number: the item waits for alice's revision."""
    alice, bob = Client(app, "alice"), Client(app, "bob")
    _author(alice, "石炭の割合は何%か", "42%")
    bob.submit("/verify", "verify-form", "/verify", answer="17%")
    item = _item(ws, origin="human")
    assert item.status == "revise"
    return item.id


# --- protocols ---------------------------------------------------------------------------------------------


def test_a_hakusho_draft_is_never_reviewed_and_only_an_author_makes_it_an_item(ws):
    draft = _draft(ws, "hakusho")
    app = create_app(ws, AppSettings())
    e1, alice, bob = Client(app, "e1"), Client(app, "e2"), Client(app, "bob")
    assert _no_task(e1, "/review") and _no_task(alice, "/review")  # old code: two valid votes accepted it
    assert _state(ws, draft) == "draft"
    author = Client(app, "alice")
    r = author.take("/author")
    assert "図で最も大きい値は何%か" in r.text  # shown as a starting point
    author.post("/author", {**author.form_fields("author-form"), "question": "図で最も大きい値は何%か",
                            "answer": "42%", "difficulty": ["Global"], "from_draft_id": str(draft)})
    item = _item(ws, origin="human")
    assert item.author_id is not None and item.status == "authored" and item.meta["from_draft"] == draft
    bob.submit("/verify", "verify-form", "/verify", answer="42 %")
    assert _state(ws, item.id) == "accepted" and _state(ws, draft) == "draft"


def test_a_domaincqa_draft_goes_to_two_experts_who_may_rate_the_two_aspects(ws):
    from zuhyo.annotate.review import review_alpha

    drafts = [_draft(ws, "astro", n) for n in range(3)]
    app = create_app(ws, AppSettings())
    scores = {"e1": [(5, 4), (2, 2), (4, 5)], "e2": [(5, 5), (1, 2), (4, 4)]}
    import re

    for expert in ("e1", "e2"):
        c = Client(app, expert)
        for _ in drafts:
            page = c.take("/review").text
            n = int(re.search(r"図で最も大きい値は何%か \((\d)\)", page).group(1))  # type: ignore[union-attr]
            relevance, accuracy = scores[expert][n]
            c.post("/review", {**c.form_fields("review-form"), "rating": "valid", "comment": "",
                               "domain_relevance": str(relevance), "answer_accuracy": str(accuracy)})
    assert [_state(ws, d) for d in drafts] == ["accepted"] * 3
    aspects = review_alpha(ws.db)["aspects"]
    assert set(aspects) == {"domain_relevance", "answer_accuracy"}  # DomainCQA §4.3's two criteria
    assert aspects["domain_relevance"]["units"] == 3 and aspects["domain_relevance"]["alpha"] > 0.5
    lo, hi = aspects["answer_accuracy"]["ci95"]
    assert lo <= aspects["answer_accuracy"]["alpha"] <= hi
    assert 'id="alpha-domain_relevance"' in Client(app, "root").get("/dashboard").text


def test_the_protocol_table_is_read_and_checked(template, tmp_path):
    from zuhyo.construct.workspace.db import WorkspaceError

    ws = _workspace(template, tmp_path, 'draft = "domaincqa"\nverifiers = 2')
    app = create_app(ws, AppSettings())
    draft = _draft(ws, "hakusho")
    _review(Client(app, "e1"), "valid")
    assert _state(ws, draft) == "reviewing"  # every draft reviewed, as the team asked
    alice, bob, dave = Client(app, "alice"), Client(app, "bob"), Client(app, "dave")
    _author(alice, "石炭の割合は何%か", "42%")
    item = _item(ws, origin="human").id
    bob.submit("/verify", "verify-form", "/verify", answer="42%")
    assert _state(ws, item) == "authored"  # one of two verifiers
    dave.submit("/verify", "verify-form", "/verify", answer="42%")
    assert _state(ws, item) == "accepted"
    ws.close()
    (tmp_path / "ws" / "zuhyo.toml").write_text((tmp_path / "ws" / "zuhyo.toml").read_text() + "experts = 2\n")
    with pytest.raises(WorkspaceError, match=r"unknown key 'experts'"):
        create_app(tmp_path / "ws", AppSettings())


def test_authors_are_held_to_section_3_2(ws):
    app = create_app(ws, AppSettings())
    alice = Client(app, "alice")
    for question, answer, why in (("石炭の割合は40%を超えるか", "はい", "yes/no"),
                                  ("次のうち最大はどれか (A) 石炭 (B) ガス", "A", "multiple-choice"),
                                  ("石炭の割合42%は何年の値か", "42%", "appears in the question")):
        r = _author(alice, question, answer)
        assert r.status_code == 400 and why in r.text and "§3.2" in r.text
    assert "自然で、問いとして成り立つ質問" in alice.take("/author").text  # the page lists every requirement
    with ws.db.read() as s:
        assert s.scalars(select(QAItemRow).where(QAItemRow.origin == "human")).first() is None


# --- independence, every role combination --------------------------------------------------------------------


@pytest.mark.parametrize("roles", [r for r in ROLE_SETS if "admin" in r], ids="-".join)
def test_whoever_revised_an_item_never_verifies_reviews_or_adjudicates_it(template, tmp_path, roles):
    ws = _workspace(template, tmp_path)
    app = create_app(ws, AppSettings())
    me = Client(app, "x-" + "-".join(roles))
    # hakusho: alice's item, a decided mismatch, revised by me (an admin)
    item = _mismatch(app, ws)
    me.submit(f"/revise/{item}", "revise-form", f"/revise/{item}", question="石炭の割合は何%か (2022年)",
              answer="42%")
    assert _state(ws, item) == "authored"
    if "annotator" in roles:
        assert _no_task(me, "/verify")  # old code: handed to them, and they accepted it
    Client(app, "dave").submit("/verify", "verify-form", "/verify", answer="42%")
    assert _state(ws, item) == "accepted"
    # domaincqa: a draft rated flawed by both experts, revised by me
    draft = _draft(ws, "astro")
    for expert in ("e1", "e2"):
        _review(Client(app, expert), "flawed")
    assert _state(ws, draft) == "revise"
    me.submit(f"/revise/{draft}", "revise-form", f"/revise/{draft}", question="図で最も大きい値は何%か (改)",
              answer="41%")
    assert _state(ws, draft) == "reviewing"
    if "expert" in roles:
        assert _no_task(me, "/review")  # old code: they could review their own revision
    for expert in ("e1", "e2"):
        _review(Client(app, expert), "valid")
    assert _state(ws, draft) == "accepted"
    ws.close()


@pytest.mark.parametrize("roles", [r for r in ROLE_SETS if "annotator" in r], ids="-".join)
def test_whoever_was_shown_the_reference_never_verifies_it(template, tmp_path, roles):
    ws = _workspace(template, tmp_path)
    app = create_app(ws, AppSettings())
    me = Client(app, "x-" + "-".join(roles))
    item = _mismatch(app, ws)
    if "admin" in roles:
        assert me.get(f"/revise/{item}").status_code == 200  # the revise page shows every answer
    Client(app, "alice").submit(f"/revise/{item}", "revise-form", f"/revise/{item}",
                                question="石炭の割合は何%か (2022年)", answer="42%")
    if "admin" in roles:
        assert _no_task(me, "/verify")
    else:
        r = me.take("/verify")
        assert 'id="verify-form"' in r.text  # never shown the reference: independent
    ws.close()


@pytest.mark.parametrize("roles", [r for r in ROLE_SETS if "annotator" in r], ids="-".join)
def test_an_author_never_verifies_nor_reviews_their_own_item(template, tmp_path, roles):
    ws = _workspace(template, tmp_path, 'human = "domaincqa"' if "expert" in roles else "")
    app = create_app(ws, AppSettings())
    me = Client(app, "x-" + "-".join(roles))
    _author(me, "石炭の割合は何%か", "42%")
    item = _item(ws, origin="human")
    assert item.status == ("draft" if "expert" in roles else "authored")
    assert _no_task(me, "/verify")
    if "expert" in roles:
        assert _no_task(me, "/review")
    ws.close()


# --- resubmission, adjudication, nothing stuck -----------------------------------------------------------------


def test_an_unchanged_resubmission_is_refused(ws):
    app = create_app(ws, AppSettings())
    item = _mismatch(app, ws)
    alice = Client(app, "alice")
    r = alice.submit(f"/revise/{item}", "revise-form", f"/revise/{item}", question="石炭の割合は何%か",
                     answer="42%")
    assert r.status_code == 400 and "unchanged" in r.text
    assert _state(ws, item) == "revise"


def test_seven_against_7_is_adjudicated_by_an_independent_person(ws):
    app = create_app(ws, AppSettings())
    alice, bob, dave = Client(app, "alice"), Client(app, "bob"), Client(app, "dave")
    _author(alice, "グラフに描かれた棒は何本か", "7本")
    bob.submit("/verify", "verify-form", "/verify", answer="seven bars")
    item = _item(ws, origin="human").id
    assert _state(ws, item) == "adjudicating"  # old code: back to the author, no person could rule
    assert f'/adjudicate/{item}"' not in bob.get("/adjudicate").text  # the verifier is not independent
    assert alice.get(f"/adjudicate/{item}").status_code == 403
    page = dave.get("/adjudicate")
    assert f'/adjudicate/{item}"' in page.text and "7本" not in page.text  # the list is blind
    r = dave.get(f"/adjudicate/{item}")
    assert "7本" in r.text and "seven bars" in r.text
    r = dave.post(f"/adjudicate/{item}", {**dave.form_fields("adjudicate-form"), "ruling": "same"})
    assert r.status_code == 400 and "reason" in r.text  # a ruling needs its reason
    dave.get(f"/adjudicate/{item}")
    dave.post(f"/adjudicate/{item}", {**dave.form_fields("adjudicate-form"), "ruling": "same",
                                      "reason": "seven = 7"})
    assert _state(ws, item) == "accepted"
    assert _no_task(dave, "/verify")  # dave saw the reference: never its blind verifier


def test_two_experts_who_disagree_reach_an_admin_not_a_wait_for_ever(template, tmp_path):
    ws = _workspace(template, tmp_path, drop=("root", *("x-" + "-".join(r) for r in ROLE_SETS)))
    app = create_app(ws, AppSettings())
    draft = _draft(ws, "astro")
    _review(Client(app, "e1"), "valid")
    _review(Client(app, "e2"), "flawed")
    item = _item(ws, id=draft)
    assert item.status == "adjudicating" and "no expert left" in (item.reason or "")
    from zuhyo.annotate.adjudicate import stuck_items

    assert [s["qa_item_id"] for s in stuck_items(ws.db)] == [draft]  # no admin: listed as stuck
    add_user(ws.db, "root2", PASSWORD, ["admin"])
    assert stuck_items(ws.db) == []
    admin = Client(app, "root2")
    assert str(draft) in admin.get("/dashboard").text
    r = admin.get(f"/adjudicate/{draft}")
    assert r.status_code == 200 and "adjudicate-form" in r.text, r.text[-1500:]
    admin.post(f"/adjudicate/{draft}", {**admin.form_fields("adjudicate-form"), "ruling": "valid",
                                        "reason": "the reading is right"})
    assert _state(ws, draft) == "accepted"
    ws.close()


# --- export ----------------------------------------------------------------------------------------------------


def test_export_carries_provenance_and_refuses_an_unverified_item(ws, tmp_path):
    from zuhyo.construct.publish.export import ExportGateError, ExportOptions, export_workspace

    app = create_app(ws, AppSettings())
    alice, bob = Client(app, "alice"), Client(app, "bob")
    _author(alice, "石炭の割合は何%か", "42%")
    bob.submit("/verify", "verify-form", "/verify", answer="42%")
    draft = _draft(ws, "astro")
    for expert in ("e1", "e2"):
        _review(Client(app, expert), "valid")
    sneaked = _draft(ws, "hakusho", n=1)
    with ws.db.write() as s:
        update_qa_item(s, s.get(QAItemRow, sneaked), actor="someone", action="edit", status="accepted")
    with pytest.raises(ExportGateError, match=rf"qa-{sneaked}: a model draft under the hakusho protocol"):
        export_workspace(ws, ExportOptions(out=tmp_path / "out"))
    with ws.db.write() as s:
        update_qa_item(s, s.get(QAItemRow, sneaked), actor="someone", action="edit", status="discarded")
    report = export_workspace(ws, ExportOptions(out=tmp_path / "out", plots=False))
    assert report.items == 2
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "out" / report.shards[0])
    chains = {row["id"]: json.loads(row["provenance"]) for row in table.to_pylist()}
    human = chains[f"qa-{_item(ws, origin='human').id}"]
    assert human["protocol"] == "hakusho" and human["author"].startswith("p-") and "alice" not in json.dumps(human)
    assert [(v["answer"], v["match"]) for v in human["verifications"]] == [("42%", "rules")]
    drafted = chains[f"qa-{draft}"]
    assert drafted["protocol"] == "domaincqa" and drafted["model"] == "openai:m"
    assert [r["rating"] for r in drafted["reviews"]] == ["valid", "valid"]
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "## Quality control" in card and "| hakusho | authored | verified |" in card
    assert "| domaincqa | drafted | reviewed |" in card and "`provenance`" in card


# --- grading data under review ---------------------------------------------------------------------------------


def _numeric_draft(ws: Workspace) -> int:
    item = _draft(ws, "astro", n=7)
    with ws.db.write() as s:
        row = s.get(QAItemRow, item)
        assert row is not None
        update_qa_item(s, row, actor="zuhyo draft", action="set", answer_kind="numeric_retrieval",
                       axis={"min": 0, "max": 100, "scale": "linear"}, category="FQA-Data", aspect="Point")
    return item


def test_grading_data_is_shown_checked_on_revision_and_stale_data_blocks_the_export(ws, tmp_path):
    from zuhyo.construct.publish.export import ExportGateError, ExportOptions, export_workspace

    app = create_app(ws, AppSettings())
    item = _numeric_draft(ws)
    e1 = Client(app, "e1")
    page = e1.take("/review").text
    assert 'id="grading"' in page and "0 – 100" in page
    _review(e1, "flawed")
    _review(Client(app, "e2"), "flawed")
    root = Client(app, "root")
    shown = {"answer_kind": "numeric_retrieval", "axis_min": "0", "axis_max": "100", "axis_scale": "linear",
             "key_points": ""}  # the grading fields as the revise page fills them in
    assert 'name="axis_max" value="100"' in root.get(f"/revise/{item}").text
    r = root.submit(f"/revise/{item}", "revise-form", f"/revise/{item}", question="図で最も大きい値は何%か (改)",
                    answer="41%", **shown)
    assert r.status_code == 400 and "grading data" in r.text  # old code: the old axis silently kept
    r = root.submit(f"/revise/{item}", "revise-form", f"/revise/{item}", question="図で最も大きい値は何%か (改)",
                    answer="41%", **{**shown, "axis_max": "50"})
    assert _item(ws, id=item).axis == {"min": 0.0, "max": 50.0, "scale": "linear"}
    for expert in ("e1", "e2"):
        _review(Client(app, expert), "valid")
    assert _state(ws, item) == "accepted"
    with ws.db.write() as s:  # an answer changed outside the app leaves the grading data unchecked
        update_qa_item(s, s.get(QAItemRow, item), actor="script", action="edit", answer="40%")
    with pytest.raises(ExportGateError, match=rf"qa-{item}: grading data .* /grading/{item}"):
        export_workspace(ws, ExportOptions(out=tmp_path / "out", plots=False))
    assert 'id="grading-stale"' in root.get(f"/grading/{item}").text
    r = root.post(f"/grading/{item}", {**root.form_fields("grading-form"), "answer_kind": "numeric_retrieval",
                                       "axis_min": "0", "axis_max": "abc", "axis_scale": "linear"})
    assert r.status_code == 400 and "axis max must be a number" in r.text
    root.get(f"/grading/{item}")
    root.post(f"/grading/{item}", {**root.form_fields("grading-form"), "answer_kind": "numeric_retrieval",
                                   "axis_min": "0", "axis_max": "50", "axis_scale": "linear"})
    assert "grading_stale" not in (_item(ws, id=item).meta or {})
    with pytest.raises(ExportGateError, match=rf"qa-{item}: no Valid consensus .* revision 3"):
        export_workspace(ws, ExportOptions(out=tmp_path / "out", plots=False))  # the experts rated revision 2
    assert Client(app, "alice").get(f"/grading/{item}").status_code == 403


def test_the_funnel_counts_items_still_in_flight(ws, tmp_path):
    from zuhyo.construct.publish.export import ExportOptions, collect_samples

    app = create_app(ws, AppSettings())
    _mismatch(app, ws)  # verified once, now waiting for revision
    funnel = collect_samples(ws, ExportOptions(out=tmp_path / "out"), "x").funnel["hakusho"]
    assert (funnel["authored"], funnel["verified"], funnel["accepted"]) == (1, 1, 0)
