"""AstroChart numeric items end to end (DomainCQA Appendix G.1): rows without answer_kind, a real local model
server answering in sentences, then `zuhyo score` with the rules extractor and with an LLM value extractor
(validated, retried, cached)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli_json
from PIL import Image

ROWS = [
    {"id": "p1", "image": "c.png", "question": "What recession velocity (km/s) corresponds to 300 Mpc?",
     "answer": "21390", "category": "Data", "aspect": "Point", "axis_min": 0, "axis_max": 32000},
    {"id": "p2", "image": "c.png", "question": "What is the peak wavelength (nm) of the 5800 K curve?",
     "answer": "500", "category": "Data", "aspect": "Point", "axis_min": 100, "axis_max": 2000},
    {"id": "p3", "image": "c.png", "question": "What is the flux at z = 2?", "answer": "3", "category": "Data",
     "aspect": "Point", "axis_min": 0, "axis_max": 10},
]
REPLIES = {"300 Mpc": "At 300 Mpc the velocity is about 21,000 km/s.",
           "5800 K": "The 5800 K curve peaks at about 500 nm.",
           "z = 2": "At z = 0.5 the flux is 3.5 mJy and it falls to 2.9 mJy."}


def _entry(doc: dict, judge: str) -> dict:
    (e,) = [e for e in doc["entries"] if e["judge"] == judge]
    return e


def test_numeric_items_rules_then_llm_extraction(tmp_path: Path, fake_server) -> None:
    Image.new("RGB", (64, 48), (200, 30, 30)).save(tmp_path / "c.png")
    qa = tmp_path / "qa.jsonl"
    qa.write_text("\n".join(json.dumps(r) for r in ROWS), encoding="utf-8")
    model = fake_server(answers=REPLIES)
    out = tmp_path / "run"
    run_cli_json("eval", "--bench", "astrochart", "--path", str(qa), "--model", f"openai:m@{model.base_url}",
                 "--prompt", "direct", "--runs", "2", "--judge", "none", "--out", str(out), "--quiet")

    rules = _entry(run_cli_json("score", str(out), "--judge", "astrochart", "--quiet"), "astrochart")
    # p1 and p2 are read off the reply's value, not its restated question number (was 0 for both); p3 has two
    # candidate values for one reference: undecided, not 0.
    assert rules["n_scored"] == 4 and rules["mean"] is not None and rules["mean"] > 0.99

    judge = fake_server(answers={"about 21,000 km/s": '[{"value": 21000, "unit": "km/s"}]',
                                 "about 500 nm": "```json\n[500]\n```", "3.5 mJy": "the flux is 3.5"})
    spec = f"astrochart:openai:judge@{judge.base_url}"
    first = run_cli_json("score", str(out), "--judge", spec, "--quiet")
    e = _entry(first, spec)
    assert e["n_scored"] == 4 and e["n_unscored"] == 2 and e["mean"] > 0.99  # p3: unusable reply, never 0
    # one call each for p1 and p2 (the second run is a cache hit), three attempts for p3
    assert judge.state.requests == 5 and first["scoring"]["cache_hits"] == 3
    again = run_cli_json("score", str(out), "--judge", spec, "--quiet")
    assert again["scoring"]["reused"] == 6 and judge.state.requests == 5
    judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    p3 = next(j for j in judgments if j["sample_id"] == "p3" and j["judge"] == spec)
    assert p3["verdict"] == "unscored" and "after 3 attempt(s)" in p3["reason"]
    p1 = next(j for j in judgments if j["sample_id"] == "p1" and j["judge"] == spec)
    assert p1["extracted_answer"] == "21000 km s^-1" and p1["metrics"]["astro_numeric"] > 0.98
