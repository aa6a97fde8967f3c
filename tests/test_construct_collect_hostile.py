"""Hostile LaTeX sources and folders: linear-time environments and captions, size refusals that name the limit,
no reading through links that leave the source, no file contents quoted in errors, file types by content."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import hostile_inputs as h
import pytest
from conftest import run_cli, run_cli_json

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pytest.importorskip("pylatexenc", reason="the [build] extra is needed")
pytest.importorskip("pymupdf", reason="the [build] extra is needed")

SECRET = b"root:x:0:0:root:/root:/bin/bash\nzuhyo-secret-line\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    return path


def _paper(n: int) -> str:
    """About ``n`` × 320 bytes of a paper: a figure per paragraph, captions with font commands and math."""
    parts = ["\\documentclass{article}\n\\newcommand{\\kep}{\\emph{Kepler}}\n\\begin{document}\n"
             "\\begin{abstract}We study \\kep{} data.\\end{abstract}\n"]
    for i in range(n):
        if i % 10 == 0:
            parts.append(f"\\section{{Part {i}}}\n")
        parts.append(f"As Figure~\\ref{{fig:{i}}} shows, the \\kep{{}} light curve of star {i} has $x^2$ "
                     f"features \\citep{{a{i}}}.\n\n\\begin{{figure}}\n\\centering\n\\includegraphics[width=0.5"
                     f"\\textwidth]{{f{i}.png}}\n\\caption{{The \\textbf{{light}} curve of {i} with $\\alpha={i}$ "
                     f"and a long explanation of what is plotted here.}}\n\\label{{fig:{i}}}\n\\end{{figure}}\n\n")
    return "".join(parts) + "\\section{Conclusions}\nWe conclude.\n\\end{document}\n"


def test_a_megabyte_of_tex_parses_in_about_a_second():
    from zuhyo.construct.collect.latex_paper import parse_paper

    text = _paper(3000)
    assert len(text) > 900_000
    start = time.perf_counter()
    paper = parse_paper(text)
    elapsed = time.perf_counter() - start
    last = paper.figures[-1]
    assert last.caption == "The light curve of 2999 with α=2999 and a long explanation of what is plotted here."
    assert last.context == ["As Figure 3000 shows, the Kepler light curve of star 2999 has x^2 features [a2999]."]
    assert last.section == "Part 2990" and paper.conclusion == "We conclude."
    assert elapsed < 8, f"{elapsed:.1f} s for {len(text):,} bytes (was ~22 s per MB; ~1 s here unloaded)"


def test_unclosed_figures_are_linear_and_reported_as_a_bounded_number_of_errors(ws: Path, tmp_path: Path):
    from zuhyo.construct.collect.latex_text import find_environments

    start = time.perf_counter()
    envs, unclosed = find_environments(h.unclosed_figures_tex(60_000).decode(), ("figure",))
    assert time.perf_counter() - start < 5  # was about 30 minutes for 60,000
    assert envs == [] and len(unclosed) == 60_000
    tarball = tmp_path / "2101.00001.tar.gz"
    tarball.write_bytes(h.tarball({"main.tex": h.unclosed_figures_tex(60_000)}))
    assert tarball.stat().st_size < 4000
    start = time.perf_counter()
    out = run_cli_json("collect", "latex", str(ws), str(tarball))
    assert time.perf_counter() - start < 60
    reasons = [e["reason"] for e in out["error_items"]]
    assert reasons[:2] == ["\\begin{figure} no. 1 is never closed", "\\begin{figure} no. 2 is never closed"]
    assert reasons[-1] == "59,980 more figure environments are never closed" and out["errors"] == 21


def test_nested_and_unclosed_environments_still_match_as_before():
    from zuhyo.construct.collect.latex_text import find_environments

    text = ("\\begin{figure}a\\begin{figure}b\\end{figure}c\\end{figure} \\begin{figure*}d\\end{figure*} "
            "\\begin{figure}open \\begin{figure}e\\end{figure} \\end{figure*}")
    envs, errors = find_environments(text, ("figure", "figure*"))
    assert [(e.name, e.body(text)) for e in envs] == [
        ("figure", "a\\begin{figure}b\\end{figure}c"), ("figure*", "d"), ("figure", "e")]
    assert errors == ["\\begin{figure} no. 3 is never closed"]


def test_an_oversized_tex_is_refused_naming_the_limit(ws: Path, tmp_path: Path):
    big = tmp_path / "big"
    big.mkdir()
    (big / "main.tex").write_bytes(b"\\documentclass{article}\n" + b"%" * (25 << 20))
    out = run_cli_json("collect", "latex", str(ws), str(big))
    (reason,) = [e["reason"] for e in out["error_items"]]
    assert reason == ("no .tex file with \\documentclass in the source (main.tex is 26,214,424 bytes, over the "
                      "20,971,520-byte limit for one .tex file (not read))")


def test_links_out_of_a_source_are_never_read(ws: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "paper.tex").write_text("\\documentclass{article}\\begin{document}\\begin{abstract}SECRET "
                                       "ABSTRACT\\end{abstract}\\end{document}\n")
    (outside / "passwd").write_bytes(SECRET)
    (outside / "chart.png").write_bytes(h.png_bytes())
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "main.tex").symlink_to(outside / "paper.tex")
    out = run_cli_json("collect", "latex", str(ws), str(linked))
    (reason,) = [e["reason"] for e in out["error_items"]]
    assert reason == ("no .tex file with \\documentclass in the source (main.tex is a link leaving the source "
                      "folder (not read))")
    con = sqlite3.connect(ws / "zuhyo.db")
    assert "SECRET" not in json.dumps([list(r) for r in con.execute("SELECT meta FROM documents")])
    con.close()
    # an image linked from outside, in a source whose main file is its own
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text("\\documentclass{article}\\begin{document}\\begin{figure}\\includegraphics"
                                    "{chart.png}\\caption{C}\\end{figure}\\end{document}\n")
    (paper / "chart.png").symlink_to(outside / "chart.png")
    out = run_cli_json("collect", "latex", str(ws), str(paper))
    assert out["figures"] == 0 and [e["reason"] for e in out["error_items"]] == [
        "figure 1: chart.png: file not found in the source"]

    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "good.png").write_bytes(h.png_bytes())
    (folder / "passwd.png").symlink_to(outside / "passwd")
    (folder / "chart.png").symlink_to(outside / "chart.png")
    (folder / "inner.png").symlink_to(folder / "good.png")  # a link inside the folder is fine
    (folder / "local.txt").write_bytes(SECRET)  # a text file in the folder: an error that quotes nothing
    out = run_cli_json("collect", "folder", str(ws), str(folder))
    reasons = {e["file"]: e["reason"] for e in out["error_items"]}
    assert out["figures"] == 2 and set(reasons) == {"passwd.png", "chart.png", "local.txt"}
    assert reasons["passwd.png"] == "a link to a file outside the folder (or a broken link); not read"
    assert reasons["local.txt"].endswith("looks like text")
    assert "root" not in json.dumps(out) and "secret" not in json.dumps(out).lower()


def test_latex_graphics_by_content_and_hostile_pdf_graphics(ws: Path, tmp_path: Path):
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}"
        "\\begin{figure}\\includegraphics{png.pdf}\\caption{A PNG named .pdf}\\end{figure}"
        "\\begin{figure}\\includegraphics{huge.pdf}\\caption{A PDF with a 12k image}\\end{figure}"
        "\\begin{figure}\\includegraphics{cycle.pdf}\\caption{A PDF with a page-tree cycle}\\end{figure}"
        "\\end{document}\n")
    (paper / "png.pdf").write_bytes(h.png_bytes((200, 100)))
    (paper / "huge.pdf").write_bytes(h.huge_image_pdf())
    one = h.image_pages_pdf([(100, 80, (50, 50, 200, 160))])
    (paper / "cycle.pdf").write_bytes(one.replace(b"/Kids [3 0 R]", b"/Kids [2 0 R]"))
    start = time.perf_counter()
    out = run_cli_json("collect", "latex", str(ws), str(paper))
    assert time.perf_counter() - start < 30
    reasons = [e["reason"] for e in out["error_items"]]
    assert out["figures"] == 1 and len(reasons) == 2
    assert reasons[0] == ("figure 2: huge.pdf: the images drawn in the region declare 144,000,000 pixels in all, "
                          "over the 89,478,485-pixel limit; not rendered")
    assert reasons[1].startswith("figure 3: cycle.pdf: cannot render the PDF: FzErrorFormat")
    con = sqlite3.connect(ws / "zuhyo.db")
    (prov,) = con.execute("SELECT provenance FROM figures").fetchone()
    con.close()
    assert json.loads(prov)["source_format"] == "png"


def test_the_cli_pixel_limit_is_the_library_default():
    import inspect

    from zuhyo.cli.construct_collect import folder_cmd, pdf_cmd
    from zuhyo.cli.construct_collect_latex import latex_cmd
    from zuhyo.images.verify import DEFAULT_MAX_PIXELS

    for cmd in (folder_cmd, pdf_cmd, latex_cmd):
        assert inspect.signature(cmd).parameters["max_pixels"].default == DEFAULT_MAX_PIXELS
