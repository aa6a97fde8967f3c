"""`zuhyo collect pdf`: embedded images (soft masks applied, fragments merged), captioned vector figures, skipped
items with reasons, encrypted/broken PDFs as per-item errors; real MEXT white-paper chapters when present."""

from __future__ import annotations

import io
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pymupdf = pytest.importorskip("pymupdf", reason="the [build] extra (PyMuPDF) is needed")



@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    return path


def _png(im: object) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "PNG")  # type: ignore[attr-defined]
    return buf.getvalue()


def _disc_rgba() -> bytes:
    """A red disc on a fully transparent background (RGBA): unmasked, the background decodes black."""
    from PIL import Image, ImageDraw

    im = Image.new("RGBA", (240, 160), (0, 0, 0, 0))
    ImageDraw.Draw(im).ellipse((60, 20, 180, 140), fill=(220, 30, 30, 255))
    return _png(im)


def _matplotlib_pdf() -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(["2019", "2020", "2021", "2022"], [3, 5, 4, 7], color="tab:blue")
    ax.plot([0, 1, 2, 3], [2, 4, 5, 6], color="tab:orange")
    ax.set_title("Sales")
    buf = io.BytesIO()
    fig.savefig(buf, format="pdf")
    plt.close(fig)
    return buf.getvalue()


def make_figures_pdf(path: Path) -> None:
    """Page 1: an RGBA image (soft mask) with a caption below, a vector matplotlib chart with a full-width
    Japanese caption above, an icon and a blank banner. Page 2: a figure made of two touching image fragments
    with a caption, and a captionless text box (a vector rectangle)."""
    from PIL import Image, ImageDraw

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_image(pymupdf.Rect(60, 60, 300, 220), stream=_disc_rgba())
    page.insert_text((60, 240), "Figure 1: A red disc on a transparent background", fontsize=10)
    page.insert_text((60, 254), "Source: the zuhyo test suite,", fontsize=8)
    page.insert_text((60, 263), "drawn with Pillow", fontsize=8)
    page.insert_text((60, 300), "■第１-３-１図／売上の推移", fontname="japan", fontsize=10)
    chart = pymupdf.open("pdf", _matplotlib_pdf())
    page.show_pdf_page(pymupdf.Rect(60, 310, 348, 526), chart, 0)
    icon = Image.new("RGB", (40, 40), (0, 120, 0))
    ImageDraw.Draw(icon).line((0, 20, 40, 20), fill=(255, 255, 255), width=6)
    page.insert_image(pymupdf.Rect(400, 60, 420, 80), stream=_png(icon))
    page.insert_image(pymupdf.Rect(60, 600, 500, 620), stream=_png(Image.new("RGB", (880, 40), (200, 220, 240))))
    page2 = doc.new_page(width=595, height=842)
    top = Image.new("RGB", (300, 100), (30, 90, 200))
    bottom = Image.new("RGB", (300, 100), (250, 200, 20))
    for im in (top, bottom):
        for x in range(0, 300, 7):
            im.putpixel((x, 50), (0, 0, 0))
    page2.insert_image(pymupdf.Rect(100, 100, 400, 200), stream=_png(top))
    page2.insert_image(pymupdf.Rect(100, 200, 400, 300), stream=_png(bottom))
    page2.insert_text((100, 320), "Table 2. Two halves of one figure", fontsize=10)
    page2.draw_rect(pymupdf.Rect(100, 500, 400, 600), color=(0, 0, 0), fill=(0.9, 0.9, 0.9))
    page2.insert_text((110, 540), "A column box with text, not a figure.", fontsize=10)
    doc.save(path)


def _stored(ws: Path, sha: str) -> object:
    from PIL import Image

    from zuhyo.images.store import ImageStore

    path = ImageStore(ws / "images").path_for(sha)
    assert path is not None
    return Image.open(path).convert("RGB")


def _figures(ws: Path) -> list[dict]:
    con = sqlite3.connect(ws / "zuhyo.db")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT locator, sha256, caption, figure_number, page, width, height, "
                                             "provenance FROM figures ORDER BY id")]
    finally:
        con.close()


def test_generated_pdf_images_masks_vectors_fragments_captions_and_skips(ws: Path, tmp_path: Path):
    import json

    pdf = tmp_path / "figs.pdf"
    make_figures_pdf(pdf)
    out = run_cli_json("collect", "pdf", str(ws), str(pdf))
    assert {k: out[k] for k in ("figures", "documents", "errors", "skipped_existing", "captioned")} == \
        {"figures": 3, "documents": 1, "errors": 0, "skipped_existing": 0, "captioned": 3}
    figs = {f["figure_number"]: f for f in _figures(ws)}
    assert set(figs) == {"1", "1-3-1", "2"}

    disc = figs["1"]
    prov = json.loads(disc["provenance"])
    assert disc["caption"] == "Figure 1: A red disc on a transparent background"
    assert prov["kind"] == "image" and prov["page"] == 1 and prov["file"] == "figs.pdf"
    assert prov["bbox"] == [60.0, 60.0, 300.0, 220.0]
    assert prov["how"] == "extracted, soft mask applied on white"
    assert prov["source"] == "the zuhyo test suite, drawn with Pillow"
    im = _stored(ws, disc["sha256"])
    assert (disc["width"], disc["height"]) == (240, 160)
    assert im.getpixel((5, 5)) == (255, 255, 255)  # transparent corner: white as on the page, not black
    assert im.getpixel((120, 80)) == (220, 30, 30)

    chart = figs["1-3-1"]
    prov = json.loads(chart["provenance"])
    assert chart["caption"] == "■第１-３-１図／売上の推移" and prov["caption_label"] == "第1-3-1図"
    assert prov["kind"] == "vector" and prov["how"].startswith("rendered from the page at 200 dpi")
    x0, y0, x1, y1 = prov["bbox"]
    assert 55 <= x0 <= 65 and 300 <= y0 <= 315 and 340 <= x1 <= 350 and 520 <= y1 <= 530
    assert chart["width"] >= 750  # 288 pt at 200 dpi

    halves = figs["2"]
    prov = json.loads(halves["provenance"])
    assert prov["kind"] == "fragments" and len(prov["xrefs"]) == 2 and prov["bbox"] == [100.0, 100.0, 400.0, 300.0]
    im = _stored(ws, halves["sha256"])
    w, h = im.size
    assert im.getpixel((w // 2, h // 4)) == (30, 90, 200) and im.getpixel((w // 2, 3 * h // 4)) == (250, 200, 20)

    reasons = sorted(s["reason"].split(" (")[0] for s in out["skipped_items"])
    assert reasons == ["blank image", "tiny image", "vector region with no caption line near it: a text box, "
                                                    "banner or decoration"]
    assert all(s["page"] in (1, 2) and len(s["bbox"]) == 4 for s in out["skipped_items"])

    again = run_cli_json("collect", "pdf", str(ws), str(pdf))
    assert (again["figures"], again["documents"], again["skipped_existing"], again["errors"]) == (0, 0, 3, 0)
    assert len(_figures(ws)) == 3
    con = sqlite3.connect(ws / "zuhyo.db")
    meta = json.loads(con.execute("SELECT meta FROM documents").fetchone()[0])
    con.close()
    assert meta["pages"] == 2 and len(meta["skipped"]) == 3


def test_encrypted_truncated_and_non_pdf_are_errors_and_the_stage_goes_on(ws: Path, tmp_path: Path):
    good = tmp_path / "good.pdf"
    make_figures_pdf(good)
    encrypted = tmp_path / "locked.pdf"
    doc = pymupdf.open(good)
    doc.save(encrypted, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    doc.close()
    truncated = tmp_path / "truncated.pdf"
    data = good.read_bytes()
    truncated.write_bytes(data[: len(data) // 3])
    text = tmp_path / "notes.pdf"
    text.write_text("not a PDF at all\n")
    stub = tmp_path / "stub.pdf"
    stub.write_bytes(data[:400])
    out = run_cli_json("collect", "pdf", str(ws), str(encrypted), str(truncated), str(stub), str(text),
                       str(tmp_path / "missing.pdf"), str(good))
    by_file = {e["file"]: e["reason"] for e in out["error_items"]}
    assert by_file["locked.pdf"] == "encrypted PDF: needs a password"
    assert by_file["stub.pdf"].startswith(("broken PDF or not a PDF: cannot be opened",
                                           "broken or truncated PDF: no readable page"))
    assert by_file["notes.pdf"] == "not a PDF (no %PDF- header in its first 1,024 bytes): looks like text"
    assert by_file["missing.pdf"] == "no such file"
    # a third of the file: mupdf repairs it and page 1 survives; collected, and still an error to look at
    assert by_file["truncated.pdf"].startswith("damaged or truncated PDF, repaired on reading")
    assert by_file["truncated.pdf"].endswith(": collected what could be read")
    assert out["errors"] == 5 and out["documents"] == 2 and out["figures"] >= 3
    status = run_cli_json("status", str(ws))
    assert status["errors"] == 5
    plain = run_cli("collect", "pdf", str(ws), str(encrypted), str(good))
    assert "locked.pdf: encrypted PDF: needs a password" in plain.stderr
    assert "3 already there" in plain.stdout  # the summary is the result (stdout); failed files are diagnostics


def test_collect_pdf_help_names_the_options():
    proc = run_cli("collect", "pdf", "--help")
    assert "--dpi" in proc.stdout and "--min-size" in proc.stdout


def test_mext_white_paper_chapters(ws: Path, shared_data: Path):
    import json

    folder = shared_data / "mext_whitepaper_pdf"
    mext_files = sorted(folder.glob("mext_r06_*_ch[35].pdf"))
    if len(mext_files) != 2:
        pytest.skip(f"the two MEXT chapter PDFs are not in {folder}")

    start = time.perf_counter()
    out = run_cli_json("collect", "pdf", str(ws), *map(str, mext_files))
    elapsed = time.perf_counter() - start
    assert (out["documents"], out["errors"]) == (2, 0)
    figs = _figures(ws)
    captioned = {f["figure_number"]: f for f in figs if f["figure_number"]}
    assert set(captioned) == {"1-3-1", "1-3-2", "1-3-3", "1-3-4", "1-3-5", "1-3-6", "1-3-7", "1-5-1", "1-5-2"}
    assert all(f["caption"].startswith("■第１-") for f in captioned.values())
    kinds = {n: json.loads(f["provenance"])["kind"] for n, f in captioned.items()}
    # 2 vector charts and 3 vector tables; 2 embedded figures per chapter, one of them the 7-fragment pyramid
    assert [n for n in sorted(kinds) if kinds[n] == "vector"] == ["1-3-1", "1-3-2", "1-3-3", "1-3-5", "1-3-7"]
    assert [n for n in sorted(kinds) if kinds[n] == "image"] == ["1-3-4", "1-5-1", "1-5-2"]
    pyramid = json.loads(captioned["1-3-6"]["provenance"])
    assert pyramid["kind"] == "fragments" and len(pyramid["xrefs"]) == 7 and pyramid["page"] == 9
    askem = json.loads(captioned["1-3-4"]["provenance"])
    assert askem["how"] == "extracted, soft mask applied on white"
    assert askem["source"] == "ＤＡＲＰＡ ウェブサイトの図に文部科学省で仮訳を付記"
    # the source line (資料：…) runs on into the next text block; the note (※…) after it is not part of it
    source = json.loads(captioned["1-3-1"]["provenance"])["source"]
    assert source.endswith("IntelligenceのFigure 1.1.6を基に文部科学省作成")
    assert json.loads(captioned["1-3-2"]["provenance"])["source"].endswith("を基に文部科学省作成")
    im = _stored(ws, captioned["1-3-4"]["sha256"])
    assert im.getpixel((2, 2)) == (255, 255, 255)  # pypdfium2-style extraction without the mask gives black here
    # the one uncaptioned image kept is the column's portrait (the filter stage tells photos from charts)
    rest = [json.loads(f["provenance"]) for f in figs if not f["figure_number"]]
    assert [(p["file"][-7:], p["page"], p["kind"]) for p in rest] == [("ch3.pdf", 16, "image")]
    # 17 embedded image placements in all: 4 figures (one of 7 fragments) + portrait + 6 skipped
    skipped_images = [s for s in out["skipped_items"] if s["kind"] == "image"]
    assert sorted(s["reason"].split(" (")[0] for s in skipped_images) == ["blank image"] * 2 + ["tiny image"] * 5
    kept = [json.loads(f["provenance"]) for f in figs]
    placed = [(p["file"], x) for p in kept for x in p.get("xrefs", [])]
    placed += [(s["page"] <= 5 and "ch5", x) for s in skipped_images for x in s["xrefs"]]  # all skips are in ch5
    assert len(placed) == 18 and len(set(placed)) == 17  # 17 embedded images, the mascot placed twice
    assert all(s["reason"] for s in out["skipped_items"])
    print(f"collect pdf on the two MEXT chapters: {elapsed:.2f} s (CLI, including start-up)")
    again = run_cli_json("collect", "pdf", str(ws), *map(str, mext_files))
    assert (again["figures"], again["skipped_existing"]) == (0, 10)


def test_a_dotted_number_running_into_text_is_not_a_caption():
    # a wrapped source line of the MEXT chapter 3 PDF begins a text block: "Figure 1.1.6を基に文部科学省作成"
    from zuhyo.construct.collect.caption_lines import parse_caption

    assert parse_caption("Figure 1.1.6を基に文部科学省作成") is None
    assert parse_caption("Figure 1.1. Sales").figure_number == "1.1"  # type: ignore[union-attr]
    assert parse_caption("Fig. 2. Results").figure_number == "2"  # type: ignore[union-attr]


def _hostile_pdfs(tmp_path: Path) -> dict[str, Path]:
    import hostile_inputs as h

    one = h.image_pages_pdf([(100, 80, (50, 50, 200, 160))])
    files = {
        "huge.pdf": h.huge_image_pdf(),  # 12k x 12k declared in ~1 KB
        "striped.pdf": h.striped_image_pdf(),  # 18 stripes of 18k x 1k: each under the limit, together over
        "bomb.pdf": h.bomb_image_pdf(),  # over twice Pillow's limit: DecompressionBombError once decoded
        "count.pdf": h.wrong_count_pdf(),  # /Count 5, one page
        "negative.pdf": one.replace(b"/Count 1", b"/Count -3"),  # RuntimeError on opening
        "cycle.pdf": one.replace(b"/Kids [3 0 R]", b"/Kids [2 0 R]"),  # FzErrorFormat: not a RuntimeError
        "bigpage.pdf": h.oversized_page_pdf(),  # 200,000 pt page: FzErrorLimit once rendered
        "image.pdf": h.png_bytes(),  # a PNG named .pdf
    }
    out = {}
    for name, data in files.items():
        out[name] = tmp_path / name
        out[name].write_bytes(data)
    return out


def test_hostile_pdfs_are_per_item_errors_checked_before_decoding_and_the_run_goes_on(ws: Path, tmp_path: Path):
    import hostile_inputs as h

    hostile = _hostile_pdfs(tmp_path)
    good = tmp_path / "good.pdf"
    make_figures_pdf(good)
    start = time.perf_counter()
    proc = h.run_limited(["collect", "pdf", str(ws), *map(str, hostile.values()), str(good), "--json"],
                         memory_bytes=1 << 30, timeout_s=120)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    out = json.loads(proc.stdout)
    reasons = {e["file"]: e["reason"] for e in out["error_items"]}
    assert reasons["huge.pdf page1/image-xref5"] == (
        "the image (xref 5) declares 12,000×12,000 = 144,000,000 pixels, over the 89,478,485-pixel limit; "
        "not decoded")
    assert reasons["bomb.pdf page1/image-xref5"].endswith("over the 89,478,485-pixel limit; not decoded")
    striped = [r for f, r in reasons.items() if f.startswith("striped.pdf")]
    assert striped == ["cannot make the image: the images drawn in the region declare 324,000,000 pixels in all, "
                       "over the 89,478,485-pixel limit; not rendered"]
    assert [f for f in reasons if f.startswith("count.pdf")] == [f"count.pdf page {n}" for n in (2, 3, 4, 5)]
    assert reasons["negative.pdf"].startswith("cannot read the PDF: RuntimeError")
    assert reasons["cycle.pdf"] == "cannot read any page: FzErrorFormat: code=7: cycle in page tree"
    (big,) = [r for f, r in reasons.items() if f.startswith("bigpage.pdf")]
    assert "pixels at 200 dpi, over the 89,478,485-pixel limit; not rendered" in big
    assert reasons["image.pdf"] == "not a PDF (no %PDF- header in its first 1,024 bytes): looks like a PNG image"
    assert out["errors"] == len(reasons) == 11
    assert out["figures"] == 3  # the good PDF after them all
    assert elapsed < 60, f"{elapsed:.1f} s"  # was 24 s for the 12k x 12k image alone, and 1.6 GB
    status = run_cli_json("status", str(ws))
    assert status["errors"] == 11


def test_max_pixels_is_a_parameter_and_recorded_in_the_run(ws: Path, tmp_path: Path):
    from zuhyo.construct.collect.pdf import collect_pdfs
    from zuhyo.construct.workspace import Workspace

    pdf = tmp_path / "figs.pdf"
    make_figures_pdf(pdf)
    with Workspace.open(ws) as w:
        report = collect_pdfs(w, [pdf], max_pixels=10_000)
    assert report.figures == 0 and report.errors >= 3
    assert all("10,000-pixel limit" in e.reason for e in report.error_items)
    con = sqlite3.connect(ws / "zuhyo.db")
    (params,) = con.execute("SELECT params FROM stage_runs WHERE stage = 'collect'").fetchone()
    con.close()
    assert '"max_pixels": 10000' in params
