"""`zuhyo demo` — the README's main command — end to end, offline (small limit to keep it quick)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli_json

pytest.importorskip("rapidocr", reason="the demo's default model is the RapidOCR baseline ([ocr] extra)")


def test_demo_end_to_end(tmp_path):
    out = tmp_path / "demo"
    result = run_cli_json("demo", "--out", str(out), "--limit", "2", "--runs", "2", "--quiet", timeout=900)
    assert result["errors"] == 0
    entries = {(e["benchmark"], e["prompt"]): e for e in result["entries"]}
    assert set(entries) == {(b, p) for b in ("sample-ja", "sample-astro") for p in ("direct", "cot")}
    for e in entries.values():
        assert e["model"] == "ocr" and e["baseline"] is True and e["judge"] == "auto"
        assert e["n_scored"] + e["n_unscored"] == 2 * 2 and e["n_errors"] == 0
    # The astro items are scored by the AstroChart suite, the Japanese ones by the rules.
    assert set(entries[("sample-ja", "direct")]["decided_by"]) <= {"rules"}
    assert set(entries[("sample-astro", "direct")]["decided_by"]) <= {"astro_numeric", "astro_exact",
                                                                       "astro_keypoints", "rules"}
    index = out / "report" / "index.html"
    html = index.read_text(encoding="utf-8")
    assert "ocr (baseline)" in html and "<table" in html and "data:image/png;base64," in html
    report = json.loads((out / "report" / "report.json").read_text(encoding="utf-8"))
    assert report
    assert (out / "run" / "summary.json").exists()
