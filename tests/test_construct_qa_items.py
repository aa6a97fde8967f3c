"""QA items in the workspace: idempotent add, revisions logged before/after, the evaluation form."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import select  # noqa: E402

from zuhyo.construct.qa.items import add_qa_item, qa_item_to_sample, update_qa_item  # noqa: E402
from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.qa_tables import ActionRow  # noqa: E402
from zuhyo.construct.workspace.records import add_figure, get_or_create_document, get_or_create_source  # noqa: E402
from zuhyo.construct.workspace.tables import FigureRow  # noqa: E402
from zuhyo.schema import AstroCategory, Figure, ImageRef  # noqa: E402


def _workspace_with_figure(tmp_path: Path) -> tuple[Workspace, int]:
    ws = Workspace.init(tmp_path / "ws")
    with ws.db.write() as s:
        src = get_or_create_source(s, "folder", str(tmp_path))
        doc, _ = get_or_create_document(s, src.id, "paper")
        fig = add_figure(s, doc.id, Figure(locator="fig1.png", sha256="a" * 64, caption="Light curve of SN 2011fe",
                                           context=["Figure 1 shows the decline."]))
        return ws, fig.id


def test_add_is_idempotent_and_updates_are_logged(tmp_path: Path):
    ws, fid = _workspace_with_figure(tmp_path)
    with ws.db.write() as s:
        row, created = add_qa_item(s, item_key=f"draft/{fid}/astro/FQA-Data/m/v1", figure_id=fid, origin="draft",
                                   question="What is the peak magnitude?", answer="-19.3", status="draft",
                                   actor="zuhyo draft", style="astro", category="FQA-Data", aspect="Point",
                                   answer_kind="numeric_retrieval", axis={"min": -20, "max": -15, "scale": "linear"})
        assert created and row.revision == 1
        again, created_again = add_qa_item(s, item_key=row.item_key, figure_id=fid, origin="draft", question="x",
                                           answer="y", status="draft", actor="zuhyo draft")
        assert again.id == row.id and not created_again and again.question == "What is the peak magnitude?"
        update_qa_item(s, row, actor="alice", action="revise", answer="-19.4")
        assert row.revision == 2
        update_qa_item(s, row, actor="alice", action="status", status="accepted")
        assert row.revision == 2  # a status change is not a new revision of the text
        with pytest.raises(ValueError, match="unknown QA status"):
            update_qa_item(s, row, actor="alice", action="status", status="approved")
    with ws.db.read() as s:
        actions = s.scalars(select(ActionRow).order_by(ActionRow.id)).all()
        assert [a.action for a in actions] == ["create", "revise", "status"]
        assert actions[1].before["answer"] == "-19.3" and actions[1].after["answer"] == "-19.4"
        fig = s.get(FigureRow, fid)
        row = s.scalars(select(type(row))).one()
        sample = qa_item_to_sample(row, fig, ImageRef(path="images/a.png"))
    assert sample.answers == ["-19.4"] and sample.astro is not None
    assert sample.astro.category is AstroCategory.DATA and (sample.astro.axis_min, sample.astro.axis_max) == (-20, -15)
    assert sample.source is not None and sample.source.caption == "Light curve of SN 2011fe"
    assert sample.metadata["qa_item_id"] == row.id and sample.metadata["revision"] == 2


def test_hakusho_item_keeps_flags_and_rejects_unknown(tmp_path: Path):
    ws, fid = _workspace_with_figure(tmp_path)
    with ws.db.write() as s:
        row, _ = add_qa_item(s, item_key=f"author/{fid}/1", figure_id=fid, origin="human", question="何年に最大か",
                             answer="2020年", status="authored", actor="alice", style="hakusho",
                             difficulty=["Multi-hop", "Counting"])
        fig = s.get(FigureRow, fid)
        assert [f.value for f in qa_item_to_sample(row, fig, None).flags] == ["Multi-hop", "Counting"]
        row.difficulty = ["Hard"]
        with pytest.raises(ValueError, match="Hard"):
            qa_item_to_sample(row, fig, None)
        with pytest.raises(ValueError, match="unknown QA status"):
            add_qa_item(s, item_key="x", figure_id=fid, origin="human", question="q", answer="a", status="new",
                        actor="alice")
