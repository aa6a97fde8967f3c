"""Builders shared by the report tests: small real benchmarks (JSONL + PNG charts) and run sets made by the real
`zuhyo eval` against the fake OpenAI-compatible server on 127.0.0.1. (No tests in this module.)"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli_json
from PIL import Image, ImageDraw

HAKUSHO_TYPES = ["Bar"] * 24 + ["Line"] * 14 + ["Pie"] * 6  # Pie: a category under the plots' threshold
FLAGS = [["Multi-hop"], ["Global"], ["Counting", "Multi-hop"], ["Visual"], ["External knowledge"], []]
ASTRO_ROWS = [  # (category, aspect, answer_kind, reference)
    ("Visual", "Color", "choice", "red"), ("Visual", "Style", "choice", "dashed"), ("Visual", "Text", "choice", "Flux"),
    ("Visual", "Layout", "choice", "two panels"), ("Data", "Point", "numeric_exact", "12"),
    ("Data", "Interval", "numeric_exact", "5"), ("Data", "Calculation", "numeric_exact", "42"),
    ("Inference", None, "choice", "increases"), ("Summary", None, "open", "The flux rises with redshift."),
    ("KB-Inference", None, "choice", "dust extinction"), ("KB-Summary", None, "open", "Stars form in dense clouds."),
]


def chart_png(path: Path, seed: int) -> None:
    """A small bar chart image, different per seed."""
    im = Image.new("RGB", (160, 120), "white")
    d = ImageDraw.Draw(im)
    for k in range(4):
        h = 20 + (seed * 7 + k * 13) % 80
        d.rectangle([15 + 35 * k, 110 - h, 40 + 35 * k, 110], fill=(40 + 50 * k, 90, 200 - 40 * k))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path)


def write_hakusho(root: Path) -> tuple[Path, list[dict]]:
    """44 Japanese items with image types, flags and images, in the `hakusho` adapter's columns."""
    rows = []
    for i, itype in enumerate(HAKUSHO_TYPES):
        chart_png(root / "img" / f"h{i}.png", i)
        rows.append({"original_id": f"h{i:02d}", "question": f"問{i}番: グラフで最も大きい値は何万人か。",
                     "answer": f"{10 + i}万人", "image": f"img/h{i}.png", "image_type": itype,
                     "flags": ",".join(FLAGS[i % len(FLAGS)]), "white_paper": "情報通信白書"})
    path = root / "hakusho.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path, rows


def write_astro(root: Path, copies: int = 2) -> tuple[Path, list[dict]]:
    """AstroChart items in every DomainCQA category (``copies`` per category/aspect), with images."""
    rows = []
    for c in range(copies):
        for k, (cat, aspect, kind, ref) in enumerate(ASTRO_ROWS):
            i = c * len(ASTRO_ROWS) + k
            chart_png(root / "astro_img" / f"a{i}.png", 100 + i)
            row = {"id": f"a{i:02d}", "image": f"astro_img/a{i}.png", "category": cat, "answer_kind": kind,
                   "question": f"Astro question {i}: what does panel {i} show?", "answer": ref}
            if aspect:
                row["aspect"] = aspect
            rows.append(row)
    path = root / "astro.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path, rows


COT_SUFFIX = {"hakusho": "\n上記の質問に対して、ステップバイステップ", "astro": "\nThink step by step"}


def answer_key(rows: list[dict], family: str, right_direct, right_cot) -> dict[str, str]:
    """question → reply: the reference where ``right_*(i)`` else a wrong answer; CoT keyed by the CoT suffix."""
    key = {}
    for i, r in enumerate(rows):
        ref = str(r["answer"])
        key[r["question"]] = ref if right_direct(i) else "9999"
        key[r["question"] + COT_SUFFIX[family]] = ref if right_cot(i) else "9999"
    return key


def eval_into(out: Path, bench: str, path: Path, url: str, model: str, judge: str, *extra: str) -> dict:
    return run_cli_json("eval", "--bench", bench, "--path", str(path), "--model", f"openai:{model}@{url}",
                        "--out", str(out), "--runs", "2", "--prompt", "both", "--judge", judge, "--quiet",
                        "--concurrency", "8", *extra)
