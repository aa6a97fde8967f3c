"""The annotation workflow's state machine (issue 12), without HTTP: users, authoring balanced across sources,
blind verification → accept / revise → re-verify by yet another user / discard, expert review rounds to
consensus, Krippendorff's α, error analysis, idempotent submit keys, expiry, the audit log and the dashboard."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("argon2", reason="the [web] extra is needed (argon2-cffi)")

from sqlalchemy import func, select  # noqa: E402

from zuhyo.annotate import (  # noqa: E402
    Conflict,
    NotAllowed,
    NotFound,
    VerifyTask,
    WorkflowConfig,
    WorkflowError,
    add_user,
    assign_reviews,
    authenticate,
    dashboard,
    deactivate,
    discard,
    list_revisions,
    next_author_task,
    next_review_task,
    next_verify_task,
    release_task,
    review_alpha,
    set_roles,
    skip_task,
    submit_authored,
    submit_review,
    submit_revision,
    submit_verification,
)
from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.db import Database  # noqa: E402
from zuhyo.construct.workspace.qa_tables import (  # noqa: E402
    ActionRow,
    AssignmentRow,
    QAFlag,
    QAItemRow,
    ReviewRow,
    SubmissionRow,
    UserRow,
)

PASSWORD = "correct horse battery"


def make_workspace(root: Path, per_source: dict[str, int], url: str | None = None) -> Workspace:
    """A workspace with ``per_source[name]`` figures in one document of each source (no images needed: the
    workflow only passes the content hash on)."""
    from zuhyo.construct.workspace.records import add_figure, get_or_create_document, get_or_create_source
    from zuhyo.schema import Figure

    ws = Workspace.init(root, db_url=url)
    with ws.db.write() as s:
        for name, n in per_source.items():
            src = get_or_create_source(s, "folder", f"/data/{name}", title=name)
            doc, _ = get_or_create_document(s, src.id, f"{name}/doc")
            for i in range(n):
                sha = f"{name}{i}".encode().hex().ljust(64, "0")
                add_figure(s, doc.id, Figure(sha256=sha, locator=f"{name}-{i}.png", caption=f"{name} 図{i}",
                                             context=[f"{name} の本文 {i}"]))
    return ws


def users(db: Database, names: list[str], *roles: str) -> list[int]:
    return [add_user(db, n, PASSWORD, roles or ("annotator",)).id for n in names]


def author(db: Database, uid: int, answer: str = "42万人", key: str | None = None) -> int:
    task = next_author_task(db, uid)
    assert task is not None
    res = submit_authored(db, uid, task.assignment_id, f"問: 図{task.figure.figure_id}の最大値は?", answer,
                          ["Global"], key or f"a-{uid}-{task.assignment_id}")
    assert res.qa_item_id is not None
    return res.qa_item_id


@pytest.fixture
def ws(tmp_path: Path):
    w = make_workspace(tmp_path / "ws", {"A": 4, "B": 2, "C": 1})
    yield w
    w.close()


def test_users_hash_roles_authenticate_and_deactivate(ws: Workspace):
    db = ws.db
    u = add_user(db, "sato", PASSWORD, ["annotator", "expert", "annotator"], display_name="佐藤")
    assert u.roles == ("annotator", "expert")
    with db.read() as s:
        row = s.get(UserRow, u.id)
        assert row is not None and row.password_hash.startswith("$argon2") and PASSWORD not in row.password_hash
    with pytest.raises(Conflict, match="'sato' already exists"):
        add_user(db, "sato", PASSWORD, ["annotator"])
    with pytest.raises(WorkflowError, match="unknown role 'boss'"):
        add_user(db, "x", PASSWORD, ["boss"])
    with pytest.raises(WorkflowError, match="too short"):
        add_user(db, "y", "short", ["annotator"])
    assert authenticate(db, "sato", "wrong password") is None
    assert authenticate(db, "nobody", PASSWORD) is None
    logged = authenticate(db, "sato", PASSWORD)
    assert logged is not None and logged.last_login_at is not None
    assert set_roles(db, "sato", ["admin"]).roles == ("admin",)
    deactivate(db, "sato")
    assert authenticate(db, "sato", PASSWORD) is None
    with db.read() as s:
        logged_actions = [a.action for a in s.scalars(select(ActionRow).where(ActionRow.target_type == "user"))]
        assert not any("argon2" in str(a.after) for a in s.scalars(select(ActionRow)))
    assert logged_actions == ["user_add", "login", "user_roles", "user_deactivate"]


def test_authoring_is_balanced_across_sources_and_one_per_image_per_author(ws: Workspace):
    db = ws.db
    a1, a2, a3, a4 = users(db, ["a1", "a2", "a3", "a4"])
    tasks = [next_author_task(db, u) for u in (a1, a2, a3)]
    assert all(t is not None for t in tasks)
    assert [t.figure.source for t in tasks] == ["A", "B", "C"]  # type: ignore[union-attr]
    assert next_author_task(db, a1) == tasks[0]  # the open assignment comes back, no second one
    t4 = next_author_task(db, a4)  # C is held; A and B have one each → A (lower id) again, another figure
    assert t4 is not None and t4.figure.source == "A" and t4.figure.figure_id != tasks[0].figure.figure_id  # type: ignore[union-attr]
    assert tasks[0] is not None
    assert tasks[0].figure.caption == "A 図0" and tasks[0].figure.context == ["A の本文 0"]
    with pytest.raises(WorkflowError, match="at least one difficulty flag"):
        submit_authored(db, a1, tasks[0].assignment_id, "問", "答", [], "k1")
    with pytest.raises(WorkflowError, match="unknown difficulty flag 'Easy'"):
        submit_authored(db, a1, tasks[0].assignment_id, "問", "答", ["Easy"], "k1")
    with pytest.raises(NotFound, match="you have no such author assignment"):  # another's: as if missing
        submit_authored(db, a2, tasks[0].assignment_id, "問", "答", ["Global"], "k1")
    res = submit_authored(db, a1, tasks[0].assignment_id, "問", "答", ["Global", "Counting"], "k1")
    assert (res.outcome, res.item_status, res.replayed) == ("authored", "authored", False)
    assert submit_authored(db, a1, tasks[0].assignment_id, "問", "答", ["Global"], "k1").replayed
    with pytest.raises(Conflict, match="is submitted, no longer open"):
        submit_authored(db, a1, tasks[0].assignment_id, "問", "答", ["Global"], "k2")
    nxt = next_author_task(db, a1)
    assert nxt is not None and nxt.figure.figure_id != tasks[0].figure.figure_id
    with db.read() as s:
        item = s.scalars(select(QAItemRow)).one()
        assert (item.item_key, item.origin, item.difficulty) == (f"author/{tasks[0].figure.figure_id}/{a1}",
                                                                 "human", ["Global", "Counting"])
        assert s.scalar(select(func.count(SubmissionRow.id))) == 1


def test_skip_with_reason_is_never_offered_again_and_counts_on_the_dashboard(ws: Workspace):
    db = ws.db
    (a1,) = users(db, ["a1"])
    seen = []
    while (task := next_author_task(db, a1)) is not None:
        seen.append(task.figure.figure_id)
        skip_task(db, a1, task.assignment_id, "no challenging question", f"s{task.assignment_id}")
    assert sorted(seen) == list(range(1, 8))  # every figure once, then nothing
    with pytest.raises(WorkflowError, match="skip reason must not be empty"):
        skip_task(db, a1, 1, " ", "x")
    board = dashboard(db)
    assert board["skip_reasons"] == {"author": {"no challenging question": 7}}
    assert board["people"][0]["skipped"] == 7


def test_blind_verification_accepts_a_match_and_never_shows_the_answer(ws: Workspace):
    db = ws.db
    a1, a2 = users(db, ["a1", "a2"])
    qa = author(db, a1, "42万人")
    assert next_verify_task(db, a1) is None  # nobody verifies their own item
    task = next_verify_task(db, a2)
    assert isinstance(task, VerifyTask) and task.qa_item_id == qa
    fields = set(VerifyTask.__dataclass_fields__)
    assert not fields & {"answer", "reference", "author", "author_id"}
    assert "42万人" not in repr(task) and task.figure.caption is None and task.figure.context == []
    res = submit_verification(db, a2, task.assignment_id, "42 万人", "v1")
    assert (res.verdict, res.item_status) == ("match", "accepted")
    with db.read() as s:
        item = s.get(QAItemRow, qa)
        assert item is not None and item.status == "accepted"
        history = [a.action for a in s.scalars(select(ActionRow).where(ActionRow.target_type == "qa_item",
                                                                        ActionRow.target_id == qa))]
    assert history == ["create", "verify_assigned", "verify_answer", "verify_match"]


def test_mismatch_goes_back_to_the_author_then_to_yet_another_verifier(ws: Workspace):
    db = ws.db
    a1, a2, a3, a4 = users(db, ["a1", "a2", "a3", "a4"])
    qa = author(db, a1, "42万人")
    t = next_verify_task(db, a2)
    assert t is not None
    res = submit_verification(db, a2, t.assignment_id, "17万人", "v1")
    assert (res.verdict, res.item_status) == ("mismatch", "revise")
    assert next_verify_task(db, a3) is None  # waiting for the author
    assert [r.qa_item_id for r in list_revisions(db, a1)] == [qa]
    assert list_revisions(db, a3) == []
    with pytest.raises(NotAllowed, match="only its author or an admin"):
        submit_revision(db, a3, qa, "問", "17万人", None, "r0")
    rev = list_revisions(db, a1)[0]
    assert [(v.answer, v.verdict) for v in rev.verifications] == [("17万人", "mismatch")]
    out = submit_revision(db, a1, qa, "問(改)", "17万人", ["Global"], "r1", comment="読み違い")
    assert (out.outcome, out.item_status) == ("revised", "authored")
    assert next_verify_task(db, a2) is None  # an earlier verifier never gets it again
    t3 = next_verify_task(db, a3)
    assert t3 is not None and t3.round == 2 and t3.question == "問(改)"
    assert submit_verification(db, a3, t3.assignment_id, "17万人", "v2").item_status == "accepted"
    with db.read() as s:
        item = s.get(QAItemRow, qa)
        assert item is not None and item.revision == 2
        before_after = s.scalars(select(ActionRow).where(ActionRow.action == "revise")).one()
        assert (before_after.before["answer"], before_after.after["answer"]) == ("42万人", "17万人")  # type: ignore[index]
    assert next_verify_task(db, a4) is None


def test_author_discards_after_mismatch_and_admin_can_discard_anything(ws: Workspace):
    db = ws.db
    a1, a2, a3 = users(db, ["a1", "a2", "a3"])
    (admin,) = users(db, ["boss"], "admin")
    qa1, qa2 = author(db, a1, "42万人"), author(db, a1, "10%")
    t = next_verify_task(db, a2)
    assert t is not None and t.qa_item_id == qa1
    with pytest.raises(NotAllowed):
        discard(db, a1, qa1, "not now")  # the author only while it waits for revision
    submit_verification(db, a2, t.assignment_id, "3", "v1")
    assert discard(db, a1, qa1, "ambiguous", "d1").item_status == "discarded"
    assert discard(db, a1, qa1, "ambiguous", "d1").replayed
    with pytest.raises(NotAllowed):
        discard(db, a3, qa2, "no")
    assert discard(db, admin, qa2, "duplicate").item_status == "discarded"
    with pytest.raises(Conflict, match="already discarded"):
        discard(db, admin, qa2, "again")
    with db.read() as s:
        assert s.scalar(select(func.count(QAItemRow.id))) == 2  # nothing deleted
    assert dashboard(db)["rates"]["discarded"] == 1.0


def test_undecided_match_goes_to_adjudication_and_a_custom_matcher_is_used(ws: Workspace):
    from zuhyo.annotate import MatchOutcome

    db = ws.db
    a1, a2 = users(db, ["a1", "a2"])
    author(db, a1, "東京都")
    t = next_verify_task(db, a2)
    assert t is not None
    calls = []

    def matcher(q: str, ref: str, ans: str) -> MatchOutcome:
        calls.append((ref, ans))
        return MatchOutcome("undecided", "test", "cannot tell")

    res = submit_verification(db, a2, t.assignment_id, "東京", "v1", matcher=matcher)
    assert calls == [("東京都", "東京")] and (res.verdict, res.item_status) == ("undecided", "adjudicating")


def test_with_adjudication_off_an_undecided_match_goes_back_to_the_author(ws: Workspace):
    from zuhyo.annotate import MatchOutcome
    from zuhyo.annotate.workflow import WorkflowConfig
    from zuhyo.construct.qa.gates import GateConfig

    db = ws.db
    a1, a2 = users(db, ["a1", "a2"])
    author(db, a1, "東京都")
    t = next_verify_task(db, a2)
    assert t is not None
    config = WorkflowConfig(gates=GateConfig(adjudicate="none"))
    res = submit_verification(db, a2, t.assignment_id, "東京", "v1",
                              matcher=lambda q, r, a: MatchOutcome("undecided", "test"), config=config)
    assert (res.verdict, res.item_status) == ("undecided", "revise")


def test_idempotent_keys_and_key_reuse_by_another_user(ws: Workspace):
    db = ws.db
    a1, a2, a3 = users(db, ["a1", "a2", "a3"])
    author(db, a1, "5")
    t = next_verify_task(db, a2)
    assert t is not None
    first = submit_verification(db, a2, t.assignment_id, "5", "same-key")
    again = submit_verification(db, a2, t.assignment_id, "999", "same-key")
    assert again.replayed and again.to_json() == first.to_json()
    with pytest.raises(Conflict, match="already used by another user"):
        submit_verification(db, a3, t.assignment_id, "5", "same-key")
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(SubmissionRow).where(SubmissionRow.key == "same-key")) == 1
        assert len(s.scalars(select(ActionRow).where(ActionRow.action == "verify_match")).all()) == 1


def test_stale_assignments_expire_and_released_work_goes_to_someone_else(ws: Workspace):
    db = ws.db
    a1, a2, a3 = users(db, ["a1", "a2", "a3"])
    author(db, a1)
    quick = WorkflowConfig(assignment_ttl=timedelta(seconds=-1))
    t2 = next_verify_task(db, a2, quick)  # expires at once
    assert t2 is not None
    t3 = next_verify_task(db, a3)
    assert t3 is not None and t3.qa_item_id == t2.qa_item_id
    with pytest.raises(Conflict, match="released, no longer open"):
        submit_verification(db, a2, t2.assignment_id, "42", "late")
    assert release_task(db, a3, t3.assignment_id).outcome == "released"
    again = next_verify_task(db, a3)
    assert again is not None and again.assignment_id != t3.assignment_id
    with db.read() as s:
        states = sorted(s.scalars(select(AssignmentRow.status).where(AssignmentRow.step == "verify")))
        expired = s.scalars(select(ActionRow).where(ActionRow.actor == "zuhyo expiry")).all()
    assert states == ["open", "released", "released"] and expired


def test_roles_and_missing_things_are_refused_with_one_line_messages(ws: Workspace):
    db = ws.db
    (e1,) = users(db, ["e1"], "expert")
    (a1,) = users(db, ["a1"])
    with pytest.raises(NotAllowed, match="'e1' does not have the annotator role"):
        next_author_task(db, e1)
    with pytest.raises(NotAllowed, match="'a1' does not have the expert role"):
        next_review_task(db, a1)
    with pytest.raises(NotFound, match="user 999"):
        next_author_task(db, 999)
    with pytest.raises(NotFound, match="assignment 77"):
        submit_verification(db, a1, 77, "x", "k")
    deactivate(db, "a1")
    with pytest.raises(NotAllowed, match="deactivated"):
        next_author_task(db, a1)


def test_drafts_and_audit_flags_appear_in_the_author_task(ws: Workspace):
    from zuhyo.construct.qa.items import add_qa_item

    db = ws.db
    (a1,) = users(db, ["a1"])
    with db.write() as s:
        draft, _ = add_qa_item(s, item_key="draft/1/x", figure_id=1, origin="draft", question="Q?", answer="A",
                               status="draft", actor="zuhyo draft")
        s.add(QAFlag(qa_item_id=draft.id, kind="text_only", fingerprint="f", detail="answerable without the image",
                     evidence={"blind": "A"}, status="open"))
    task = next_author_task(db, a1)
    assert task is not None and task.figure.figure_id == 1
    assert [(d.question, d.answer) for d in task.drafts] == [("Q?", "A")]
    assert [(f.kind, f.qa_item_id) for f in task.flags] == [("text_only", draft.id)]


def _drafts(db: Database, n: int) -> list[int]:
    from zuhyo.construct.qa.items import add_qa_item

    ids = []
    with db.write() as s:
        for i in range(n):
            row, _ = add_qa_item(s, item_key=f"draft/{i + 1}/astro", figure_id=i % 7 + 1, origin="draft",
                                 question=f"Q{i}", answer=f"A{i}", status="draft", actor="zuhyo draft", style="astro")
            ids.append(row.id)
    return ids


def _reviewers(db: Database, qa: int, round_: int) -> list[int]:
    with db.read() as s:
        return sorted(s.scalars(select(AssignmentRow.user_id).where(
            AssignmentRow.step == "review", AssignmentRow.qa_item_id == qa, AssignmentRow.round == round_)))


def _open_review(db: Database, uid: int, qa: int) -> int:
    task = next_review_task(db, uid)
    assert task is not None and task.qa_item_id == qa
    return task.assignment_id


def test_two_random_experts_then_consensus_or_another_round(ws: Workspace):
    db = ws.db
    experts = users(db, [f"e{i}" for i in range(6)], "expert")
    (admin,) = users(db, ["boss"], "admin")
    q_ok, q_bad, q_split = _drafts(db, 3)
    assert assign_reviews(db, random.Random(7)) == 6
    draw = {q: _reviewers(db, q, 1) for q in (q_ok, q_bad, q_split)}
    assert all(len(set(v)) == 2 for v in draw.values())
    for e in draw[q_ok]:
        submit_review(db, e, _open_review(db, e, q_ok), "valid", f"ok{e}")
    for e in draw[q_bad]:
        res = submit_review(db, e, _open_review(db, e, q_bad), "flawed", f"bad{e}", comment="単位が違う",
                            correction={"answer": "3 km"})
    assert res.item_status == "revise"
    x, y = draw[q_split]
    assert submit_review(db, x, _open_review(db, x, q_split), "valid", "s1").outcome == "reviewing"
    second = submit_review(db, y, _open_review(db, y, q_split), "flawed", "s2")
    assert (second.outcome, second.item_status) == ("next_round", "reviewing")
    assert assign_reviews(db, random.Random(1)) == 1
    (third,) = _reviewers(db, q_split, 2)
    assert third not in (x, y) and third in experts
    final = submit_review(db, third, _open_review(db, third, q_split), "valid", "s3")
    assert (final.outcome, final.item_status) == ("accepted", "accepted")
    with db.read() as s:
        assert s.get(QAItemRow, q_ok).status == "accepted"  # type: ignore[union-attr]
        split_rows = s.scalars(select(ReviewRow).where(ReviewRow.qa_item_id == q_split))
        rounds = sorted((r.round, r.rating) for r in split_rows)
        correction = s.scalars(select(ReviewRow.correction).where(ReviewRow.qa_item_id == q_bad)).first()
        logged = s.scalars(select(ActionRow).where(ActionRow.action == "review_rating")).all()
        assert len(logged) == s.scalar(select(func.count(ReviewRow.id))) == 7
        assert {a.user_id for a in logged} <= set(experts)
    assert rounds == [(1, "flawed"), (1, "valid"), (2, "valid")] and correction == {"answer": "3 km"}
    # flawed → an admin revises → a new round with two experts again, who have not rated this revision
    rev = submit_revision(db, admin, q_bad, "Q1 (revised)", "3 km", None, "rv")
    assert rev.item_status == "reviewing"
    assert assign_reviews(db, random.Random(3)) == 2
    assert len(_reviewers(db, q_bad, 2)) == 2


def test_review_draw_is_reproducible_with_a_seed(tmp_path: Path):
    draws = []
    for n in range(2):
        w = make_workspace(tmp_path / f"w{n}", {"A": 3})
        users(w.db, [f"e{i}" for i in range(5)], "expert")
        qs = _drafts(w.db, 3)
        assign_reviews(w.db, random.Random(42))
        draws.append([_reviewers(w.db, q, 1) for q in qs])
        w.close()
    assert draws[0] == draws[1]


def test_pull_review_and_no_expert_reviews_twice_in_a_round(ws: Workspace):
    db = ws.db
    e1, e2, e3 = users(db, ["e1", "e2", "e3"], "expert")
    (q,) = _drafts(db, 1)
    rng = random.Random(0)
    t1 = next_review_task(db, e1, rng)
    assert t1 is not None and t1.question == "Q0" and t1.answer == "A0" and t1.round == 1
    submit_review(db, e1, t1.assignment_id, "valid", "p1")
    assert next_review_task(db, e1, rng) is None
    t2 = next_review_task(db, e2, rng)
    assert t2 is not None
    assert next_review_task(db, e3, rng) is None  # both first-round slots are taken
    with pytest.raises(WorkflowError, match="valid or flawed"):
        submit_review(db, e2, t2.assignment_id, "meh", "p2")
    assert submit_review(db, e2, t2.assignment_id, "VALID", "p2").item_status == "accepted"


def test_review_alpha_matches_the_krippendorff_package(ws: Workspace):
    import krippendorff
    import numpy as np

    db = ws.db
    e = users(db, ["e1", "e2", "e3"], "expert")
    qs = _drafts(db, 4)
    ratings = {qs[0]: ("valid", "valid"), qs[1]: ("flawed", "flawed"), qs[2]: ("valid", "flawed"),
               qs[3]: ("flawed", "valid")}
    for q, (r1, r2) in ratings.items():
        for uid, rating in ((e[0], r1), (e[1], r2)):
            t = next_review_task(db, uid, random.Random(q))
            assert t is not None
            submit_review(db, uid, t.assignment_id, rating, f"{q}-{uid}")
    out = review_alpha(db)
    matrix = np.array([[1, 0, 1, 0], [1, 0, 0, 1]], dtype=float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert out["overall"]["alpha"] == pytest.approx(expected)
    assert (out["overall"]["coders"], out["overall"]["units"], out["overall"]["ratings"]) == (2, 4, 8)
    assert out["rounds"][1]["alpha"] == pytest.approx(expected)
    assert dashboard(db)["alpha"]["overall"]["alpha"] == pytest.approx(expected)


def test_passwords_are_hashed_at_argon2_cffi_defaults(cheap_password_hashes):
    """The suite hashes at the lowest cost (conftest's ``cheap_password_hashes``); the app itself at the library's
    defaults, and a login rehashes a hash made at a lower cost."""
    from argon2 import PasswordHasher, extract_parameters

    from zuhyo.annotate import users

    production = cheap_password_hashes()  # the hasher conftest replaced
    defaults = PasswordHasher()
    assert (production.time_cost, production.memory_cost, production.parallelism) == (
        defaults.time_cost, defaults.memory_cost, defaults.parallelism)
    cheap = users._hasher().hash(PASSWORD)
    assert extract_parameters(cheap).time_cost == 1 and production.check_needs_rehash(cheap)
