"""`zuhyo users`, `zuhyo agreement` and `zuhyo errors` in subprocesses (the real console entry point), and the
error-analysis import from a run set made by the real `zuhyo eval`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("argon2", reason="the [web] extra is needed (argon2-cffi)")


def zuhyo_stdin(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zuhyo", *args], input=stdin, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "200"})


def test_users_add_list_set_roles_deactivate(tmp_path: Path):
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    proc = zuhyo_stdin("s3cret-pass\n", "users", "add", str(ws), "tanaka", "--role", "annotator", "--role",
                       "expert", "--password-stdin", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) | {"id": 0} == {"id": 0, "name": "tanaka", "display_name": None,
                                                   "roles": ["annotator", "expert"], "locale": "ja", "active": True}
    again = zuhyo_stdin("s3cret-pass\n", "users", "add", str(ws), "tanaka", "--role", "annotator", "--password-stdin")
    assert again.returncode == 1 and "user 'tanaka' already exists" in again.stderr
    bad = zuhyo_stdin("s3cret-pass\n", "users", "add", str(ws), "x", "--role", "root", "--password-stdin")
    assert bad.returncode == 1 and "unknown role 'root'" in bad.stderr
    no_tty = zuhyo_stdin("", "users", "add", str(ws), "y", "--role", "annotator")
    assert no_tty.returncode == 1 and "--password-stdin" in no_tty.stderr
    assert run_cli_json("users", "set-roles", str(ws), "tanaka", "--role", "admin")["roles"] == ["admin"]
    assert run_cli_json("users", "deactivate", str(ws), "tanaka")["active"] is False
    listed = run_cli_json("users", "list", str(ws))["users"]
    assert [(u["name"], u["roles"], u["active"]) for u in listed] == [("tanaka", ["admin"], False)]
    missing = run_cli("users", "deactivate", str(ws), "nobody", check=False)
    assert missing.returncode == 1 and "user 'nobody': no such user" in missing.stderr

    from zuhyo.annotate import authenticate
    from zuhyo.construct.workspace import Workspace

    with Workspace.open(ws) as w:
        assert authenticate(w.db, "tanaka", "s3cret-pass") is None  # deactivated
    run_cli("users", "activate", str(ws), "tanaka")
    with Workspace.open(ws) as w:
        assert authenticate(w.db, "tanaka", "s3cret-pass") is not None


def test_agreement_matches_the_krippendorff_package_at_every_level(tmp_path: Path):
    import krippendorff
    import numpy as np

    rows = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5], [None, 3, 3, 3, 2, 3, 4, 2, 2, 5]]
    csv_path = tmp_path / "r.csv"
    csv_path.write_text("\n".join(",".join("" if v is None else str(v) for v in r) for r in rows) + "\n",
                        encoding="utf-8")
    data = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        out = run_cli_json("agreement", "--input", str(csv_path), "--level", level, "--bootstrap", "0")
        assert out == {"alpha": pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level)),
                       "ci95": None, "level": level, "coders": 3, "units": 10, "bootstrap": 0, "seed": 0}


def test_agreement_with_names_text_labels_and_bad_csvs(tmp_path: Path):
    named = tmp_path / "named.csv"
    named.write_text("coder,q1,q2,q3,q4\nA,valid,flawed,valid,valid\nB,valid,flawed,flawed,valid\n", encoding="utf-8")
    out = run_cli_json("agreement", "--input", str(named), "--header", "--coder-names")
    assert (out["coders"], out["units"], out["level"]) == (2, 4, "nominal")
    assert out["alpha"] == pytest.approx(0.5333333, abs=1e-6)
    cases = {
        "ragged.csv": ("1,2,3\n1,2\n", ["--level", "interval"], "row 2 has 2 units, expected 3"),
        "text.csv": ("1,2,x\n1,2,3\n", ["--level", "interval"], "row 1, column 3: 'x' is not a number"),
        "one.csv": ("1,2,3\n", [], "1 coder row(s); alpha needs at least two coders"),
        "same.csv": ("1,1\n1,1\n", [], "alpha is undefined"),
        "empty.csv": ("\n", [], "no coder rows"),
    }
    for name, (text, extra, message) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        proc = run_cli("agreement", "--input", str(tmp_path / name), *extra, check=False)
        assert proc.returncode == 1 and message in proc.stderr, (name, proc.stderr)
    proc = run_cli("agreement", "--input", str(tmp_path / "missing.csv"), check=False)
    assert proc.returncode == 1 and "cannot read" in proc.stderr
    proc = run_cli("agreement", "--input", str(named), "--level", "fuzzy", check=False)
    assert proc.returncode == 1 and "--level must be one of" in proc.stderr


@pytest.fixture(scope="module")
def runset(tmp_path_factory) -> dict:
    from test_report_support import answer_key, eval_into, write_hakusho

    from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

    root = tmp_path_factory.mktemp("err_runs")
    path, rows = write_hakusho(root / "data")
    srv = FakeOpenAIServer(ServerState(answers=answer_key(rows, "hakusho", lambda i: i % 4 != 3,
                                                          lambda i: i % 5 != 4))).start()
    try:
        eval_into(root / "set", "hakusho", path, srv.base_url, "err-model", "rules")
        return {"dir": root / "set", "model": f"openai:err-model@{srv.base_url}", "rows": rows}
    finally:
        srv.stop()


def test_errors_import_sample_tag_and_breakdown(runset: dict, tmp_path: Path):
    from zuhyo.annotate import add_user, dashboard, next_error_task, submit_error_tag
    from zuhyo.annotate.errors_analysis import wrong_answers
    from zuhyo.construct.workspace import Workspace

    spec, wrong = wrong_answers(runset["dir"], "err-model")
    n_rows = len(runset["rows"])
    # wrong: direct i % 4 == 3, CoT i % 5 == 4; two runs each
    assert spec == runset["model"]
    assert len(wrong) == 2 * (sum(i % 4 == 3 for i in range(n_rows)) + sum(i % 5 == 4 for i in range(n_rows)))
    assert all(w["prediction"] == "9999" and w["question"] and w["references"] for w in wrong)
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    first = run_cli_json("errors", "import", str(ws), "--runs", str(runset["dir"]), "--model", "err-model",
                         "--n", "5", "--seed", "3", "--error-type", "perception", "--error-type", "counting")
    assert (first["wrong"], first["sampled"], first["imported"], first["existing"]) == (len(wrong), 5, 5, 0)
    again = run_cli_json("errors", "import", str(ws), "--runs", str(runset["dir"]), "--model", "err-model",
                         "--n", "5", "--seed", "3")
    assert (again["imported"], again["existing"]) == (0, 5)
    bad = run_cli("errors", "import", str(ws), "--runs", str(runset["dir"]), "--model", "nope", check=False)
    assert bad.returncode == 1 and "model 'nope' is not in the run set" in bad.stderr
    assert run_cli_json("errors", "breakdown", str(ws))["groups"][0]["tagged"] == 0
    with Workspace.open(ws) as w:
        uid = add_user(w.db, "tagger", "long enough pw", ["annotator"]).id
        tagged = []
        while (task := next_error_task(w.db, uid)) is not None:
            assert task.error_types == ("perception", "counting") and task.payload["prediction"] == "9999"
            kind = "counting" if len(tagged) < 3 else "perception"
            with pytest.raises(Exception, match="unknown error type 'knowledge'"):
                submit_error_tag(w.db, uid, task.assignment_id, "knowledge", None, f"k{task.assignment_id}")
            submit_error_tag(w.db, uid, task.assignment_id, kind, "読み違い", f"t{task.assignment_id}")
            tagged.append(task.error_sample_id)
        assert len(set(tagged)) == 5
        assert dashboard(w.db)["errors"]["groups"][0]["types"] == {"counting": 3, "perception": 2}
    out = run_cli_json("errors", "breakdown", str(ws))["groups"][0]
    assert (out["samples"], out["tagged"], out["types"]) == (5, 5, {"counting": 3, "perception": 2})
    report = run_cli_json("report", str(runset["dir"]), "--out", str(tmp_path / "report"), "--workspace", str(ws),
                          "--no-plots", "--bootstrap", "100")
    assert "error_analysis" in report["tables"]
    assert report["error_analysis"]["groups"][0]["types"] == {"counting": 3, "perception": 2}
    table = (tmp_path / "report" / "tables" / "error_analysis.md").read_text(encoding="utf-8")
    assert "60.0% (3)" in table and "40.0% (2)" in table
    plain = run_cli_json("report", str(runset["dir"]), "--out", str(tmp_path / "report2"), "--no-plots",
                         "--bootstrap", "100")
    assert "error_analysis" not in plain["tables"] and "error_analysis" not in plain
