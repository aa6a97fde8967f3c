"""Render zuhyo's bundled sample benchmarks ``sample-ja`` and ``sample-astro``.

    python scripts/render_samples.py            # regenerate both folders under src/zuhyo/benchmarks/data/
    python scripts/render_samples.py --only ja  # one of them

``sample-ja``: 44 Japanese white-paper-style chart/table images drawn from real public statistics (numbers
stated in 令和5年版 情報通信白書, CC BY 4.0, plus 国勢調査 totals), one hard QA each, answers computed from the
numbers and asserted against hand-checked values; every number that comes from the white paper is quoted
verbatim and the quote is checked against the white paper's text (``--wp-text``).
``sample-astro``: astronomy-style charts from physically motivated synthetic data, with FQA/AQA items in every
DomainCQA category and aspect.

Output is deterministic (fixed seeds, no PNG timestamps, palette PNGs).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from PIL import Image  # noqa: E402
from zuhyo_samples import astro  # noqa: E402
from zuhyo_samples.common import save_png, use_japanese_font  # noqa: E402
from zuhyo_samples.ja_items import JaItem  # noqa: E402

from zuhyo.schema import HakushoMeta, ImageRef, Sample, SourceInfo, sample_to_json  # noqa: E402

DATA_DIR = ROOT / "src" / "zuhyo" / "benchmarks" / "data"
DEFAULT_WP_TEXT = ROOT.parent / "shared" / "data" / "ict-white-paper" / "data_r5.txt"


def ja_items() -> list[JaItem]:
    """All ``sample-ja`` items, in output order."""
    from zuhyo_samples import ja_bar_line, ja_composite, ja_dashboard, ja_map, ja_pie_table

    items = ja_bar_line.ITEMS + ja_pie_table.ITEMS + ja_map.ITEMS + ja_composite.ITEMS + ja_dashboard.ITEMS
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate sample-ja ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return items


def ja_answers(item: JaItem) -> list[str]:
    """The item's reference answers computed from its numbers; raises when they disagree with ``expected``."""
    answers = item.answer(item.data)
    if not answers or answers[0] != item.expected:
        raise AssertionError(f"{item.id}: computed answer {answers[:1]} != expected {item.expected!r}")
    return answers


def check_quotes(items: list[JaItem], text_path: Path) -> int:
    """Assert every quoted passage occurs verbatim in the white-paper text; returns how many were checked."""
    text = text_path.read_text(encoding="utf-8")
    missing = [(i.id, q) for i in items for q in i.quotes if q not in text]
    if missing:
        lines = "\n".join(f"  {sid}: {q}" for sid, q in missing)
        raise AssertionError(f"quotes not found in {text_path}:\n{lines}")
    return sum(len(i.quotes) for i in items)


def _image_ref(path: Path, rel: str) -> ImageRef:
    data = path.read_bytes()
    with Image.open(path) as im:
        w, h = im.size
    return ImageRef(path=rel, sha256=hashlib.sha256(data).hexdigest(), width=w, height=h, mime="image/png")


def ja_sample(item: JaItem, out_dir: Path) -> Sample:
    """Render one item's image into ``out_dir/images`` and return its Sample."""
    rel = f"images/{item.id}.png"
    save_png(item.draw(item.data), out_dir / rel)
    answers = ja_answers(item)
    context = "／".join(item.quotes) if item.quotes else None
    return Sample(
        id=item.id, benchmark="sample-ja", question=item.question, answers=answers,
        image=_image_ref(out_dir / rel, rel), image_type=item.image_type, flags=list(item.flags),
        source=SourceInfo(url=item.url, title=item.source_title, publisher=item.source_publisher,
                          caption=item.caption, context=context, license=item.source_license),
        hakusho=HakushoMeta(white_paper=item.white_paper, topic_group=item.topic),
        metadata={"data_origin": item.data_origin, "data": item.data, "rendered_by": "scripts/render_samples.py"},
    )


def write_jsonl(samples: list[Sample], path: Path) -> None:
    """Write samples one JSON object per line (zuhyo's own schema)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(sample_to_json(s) + "\n" for s in samples), encoding="utf-8")


def _clean_images(folder: Path) -> None:
    # Stale images from renamed items would otherwise linger in the bundle.
    for p in (folder / "images").glob("*.png"):
        p.unlink()


def render_ja(out_dir: Path, wp_text: Path | None) -> list[Sample]:
    """Render ``sample-ja`` into ``out_dir`` (samples.jsonl + images/)."""
    items = ja_items()
    if wp_text is not None:
        print(f"sample-ja: {check_quotes(items, wp_text)} quoted passages found in {wp_text}")
    _clean_images(out_dir)
    samples = [ja_sample(i, out_dir) for i in items]
    write_jsonl(samples, out_dir / "samples.jsonl")
    return samples


def render_astro(out_dir: Path) -> list[Sample]:
    """Render ``sample-astro`` into ``out_dir`` (samples.jsonl + images/)."""
    _clean_images(out_dir)
    samples: list[Sample] = []
    for chart in astro.charts():
        rel = f"images/{chart.id}.png"
        save_png(chart.draw(), out_dir / rel, colors=128)
        ref = _image_ref(out_dir / rel, rel)
        samples += astro.chart_samples(chart, ref)
    write_jsonl(samples, out_dir / "samples.jsonl")
    return samples


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=["ja", "astro"], help="render one benchmark only")
    ap.add_argument("--out-dir", type=Path, default=DATA_DIR, help="parent folder of sample-ja/ and sample-astro/")
    ap.add_argument("--wp-text", type=Path, default=Path(os.environ.get("ZUHYO_WP_TEXT", DEFAULT_WP_TEXT)),
                    help="full text of 令和5年版 情報通信白書 to check the quoted numbers against")
    ap.add_argument("--skip-quote-check", action="store_true", help="do not check quotes (when the text is absent)")
    args = ap.parse_args(argv)
    font = use_japanese_font()
    wp_text = None if args.skip_quote_check else args.wp_text
    if wp_text is not None and not wp_text.is_file():
        ap.error(f"white-paper text not found: {wp_text} (give --wp-text or --skip-quote-check)")
    if args.only in (None, "ja"):
        s = render_ja(args.out_dir / "sample-ja", wp_text)
        print(f"sample-ja: {len(s)} samples (font {font})")
    if args.only in (None, "astro"):
        s = render_astro(args.out_dir / "sample-astro")
        print(f"sample-astro: {len(s)} samples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
