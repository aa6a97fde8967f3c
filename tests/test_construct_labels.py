"""Append-only figure labels (migration 0003): identity, precedence of people's labels, kept figures only."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json
from postgres_cluster import PostgresCluster, postgres  # noqa: F401 - the session fixture

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")

from zuhyo.construct.workspace import Workspace  # noqa: E402
from zuhyo.construct.workspace.labels import CCV_STAGE, current_ccvs, current_labels, record_label  # noqa: E402


@pytest.fixture
def ws3(tmp_path: Path) -> Path:
    """A workspace with three collected figures (ids 1-3)."""
    from test_construct_collect_folder import make_image_folder

    make_image_folder(tmp_path / "imgs", 3, subdirs=0)
    run_cli("init", str(tmp_path / "ws"))
    assert run_cli_json("collect", "folder", str(tmp_path / "ws"), str(tmp_path / "imgs"))["figures"] == 3
    return tmp_path / "ws"


def _ccv(*ones: int) -> dict[str, int]:
    from zuhyo.schema import CCV_ATTRIBUTES

    return {a.name: int(i in ones) for i, a in enumerate(CCV_ATTRIBUTES)}


def test_same_identity_adds_nothing_and_people_win(ws3: Path):
    with Workspace.open(ws3) as ws:
        with ws.db.write() as s:
            assert record_label(s, 1, "image_type", "Bar", source="model", model="openai:a", prompt_version="1")
            assert record_label(s, 1, "image_type", "Line", source="model", model="openai:a",
                                prompt_version="1") is None
            assert record_label(s, 1, "image_type", "Pie", source="model", model="openai:b", prompt_version="1")
            assert record_label(s, 2, "image_type", "Map", source="model", model="openai:a", prompt_version="1")
        assert current_labels(ws, "image_type") == {1: "Pie", 2: "Map"}
        with ws.db.write() as s:
            record_label(s, 2, "image_type", "Table", source="import", model="import:abc")
            # a later model answer does not overturn a person's label
            record_label(s, 2, "image_type", "Bar", source="model", model="openai:c", prompt_version="1")
            with pytest.raises(ValueError, match="label source"):
                record_label(s, 3, "image_type", "Bar", source="guess", model="x")
        assert current_labels(ws, "image_type") == {1: "Pie", 2: "Table"}


def test_current_ccvs_in_table3_order_without_dropped_figures(ws3: Path):
    with Workspace.open(ws3) as ws:
        with ws.db.write() as s:
            record_label(s, 1, CCV_STAGE, _ccv(0, 9), source="model", model="openai:a", prompt_version="1")
            record_label(s, 2, CCV_STAGE, _ccv(), source="model", model="openai:a", prompt_version="1")
            record_label(s, 3, CCV_STAGE, _ccv(4), source="human", model="user:ann")
    run_cli_json("decide", str(ws3), "2", "drop", "--reason", "a photo")
    with Workspace.open(ws3) as ws:
        assert current_ccvs(ws) == {1: (1, 0, 0, 0, 0, 0, 0, 0, 0, 1), 3: (0, 0, 0, 0, 1, 0, 0, 0, 0, 0)}
        assert current_ccvs(ws, kept_only=False)[2] == (0,) * 10


def test_labels_on_postgres(postgres: PostgresCluster, tmp_path: Path):  # noqa: F811
    """JSONB values (a bare string, an object) round-trip; the unique identity holds on PostgreSQL too."""
    from test_construct_collect_folder import make_image_folder

    url = postgres.create_database("zuhyo_labels")
    make_image_folder(tmp_path / "imgs", 2, subdirs=0)
    run_cli("init", str(tmp_path / "ws"), "--db", url)
    run_cli_json("collect", "folder", str(tmp_path / "ws"), str(tmp_path / "imgs"))
    with Workspace.open(tmp_path / "ws") as ws:
        with ws.db.write() as s:
            assert record_label(s, 1, "image_type", "Bar", source="model", model="m", prompt_version="1")
            assert record_label(s, 1, "image_type", "Pie", source="model", model="m", prompt_version="1") is None
            record_label(s, 2, CCV_STAGE, _ccv(1, 2), source="import", model="import:abc")
        assert current_labels(ws, "image_type") == {1: "Bar"}
        assert current_ccvs(ws) == {2: (0, 1, 1, 0, 0, 0, 0, 0, 0, 0)}
