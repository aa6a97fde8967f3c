"""Fuzz-style: 200 generated broken inputs (100 PDFs, 60 LaTeX tarballs, 40 HTML pages with their images) through
the collectors, each run in a subprocess under a memory limit (``RLIMIT_AS``) and a time limit. Every run must end
normally, with each broken input as per-item errors (or collected, when the damage left it readable): no
traceback, no run aborted, nothing over the limits."""

from __future__ import annotations

import http.server
import json
import random
import sqlite3
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import hostile_inputs as h
import pytest
from conftest import run_cli

pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
pymupdf = pytest.importorskip("pymupdf", reason="the [build] extra is needed")
pytest.importorskip("pylatexenc", reason="the [build] extra is needed")

MEMORY = 2 << 30  # the address space, not the resident size: Python, numpy and mupdf map ~1 GB to start
TIME_S = 300


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    run_cli("init", str(path))
    return path


def _run(*args: str) -> dict:
    proc = h.run_limited([*args, "--json"], memory_bytes=MEMORY, timeout_s=TIME_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def _documents(ws: Path) -> list[str]:
    con = sqlite3.connect(ws / "zuhyo.db")
    try:
        return [r[0] for r in con.execute("SELECT locator FROM documents")]
    finally:
        con.close()


def test_100_broken_pdfs(ws: Path, tmp_path: Path):
    from test_construct_collect_pdf import make_figures_pdf

    good = tmp_path / "good.pdf"
    make_figures_pdf(good)
    folder = tmp_path / "pdfs"
    folder.mkdir()
    hostile = [h.huge_image_pdf(), h.striped_image_pdf(), h.bomb_image_pdf(), h.wrong_count_pdf(),
               h.oversized_page_pdf(), h.png_bytes(), h.huge_image_pdf(30_000), b"", b"%PDF-1.7\n", b"%PDF" * 10_000]
    inputs = hostile + list(h.broken_variants(good.read_bytes(), 100 - len(hostile), seed=1))
    files = []
    for k, data in enumerate(inputs):
        files.append(folder / f"f{k:03d}.pdf")
        files[-1].write_bytes(data)
    out = _run("collect", "pdf", str(ws), *map(str, files))
    failed = {e["file"].split(" ", 1)[0] for e in out["error_items"]}
    documented = set(_documents(ws))
    assert all(f.name in failed or f.name in documented for f in files)  # each one accounted for
    assert out["errors"] >= len(hostile) and {f"f{k:03d}.pdf" for k in range(len(hostile))} <= failed


def _paper_tex(rng: random.Random) -> bytes:
    figures = "".join(f"\\begin{{figure}}\\includegraphics{{f{k}.png}}\\caption{{Figure {k} with $\\alpha_{k}$ and "
                      f"\\textbf{{bold}}}}\\label{{fig:{k}}}\\end{{figure}}\nAs \\ref{{fig:{k}}} shows.\n\n"
                      for k in range(rng.randrange(1, 6)))
    return (b"\\documentclass{article}\\newcommand{\\x}[1]{\\emph{#1}}\\begin{document}\\begin{abstract}An \\x{abs}"
            b"tract.\\end{abstract}\n" + figures.encode() + b"\\section{Conclusions}Done.\\end{document}\n")


def test_60_broken_tarballs(ws: Path, tmp_path: Path):
    rng = random.Random(2)
    folder = tmp_path / "tars"
    folder.mkdir()
    png = h.png_bytes()
    hostile = [
        h.tarball({"main.tex": h.unclosed_figures_tex(60_000)}),
        h.tarball({"main.tex": b"\\documentclass{article}\\begin{document}" + b"\\x{" * 50_000}),
        h.tarball({"main.tex": b"\\documentclass{article}" + b"\\newcommand{\\a}{" * 20_000}),
        h.tarball({"main.tex": b"\\documentclass{article}\\begin{document}\\begin{figure}\\caption{"
                   + b"{" * 5000 + b"$\\frac{1}{2}$" + b"}" * 5000 + b"}\\end{figure}\\end{document}"}),
        h.tarball({"main.tex": _paper_tex(rng), "f0.png": h.png_header(50_000, 50_000),
                   "f1.png": h.huge_image_pdf(), "f2.png": b"\x89PNG\r\n\x1a\n" + b"\0" * 100}),
        h.gzip_bytes(b"\\documentclass{article}" + b"\\begin{figure}" * 10_000),
        b"\x1f\x8b\x08\x00" + b"\0" * 50, b"", b"not a tarball at all",
    ]
    goods = [h.tarball({"main.tex": _paper_tex(rng), **{f"f{k}.png": png for k in range(5)}}) for _ in range(6)]
    inputs = hostile + [v for g in goods for v in h.broken_variants(g, (60 - len(hostile)) // len(goods) + 1,
                                                                      seed=len(g))][: 60 - len(hostile)]
    files = []
    for k, data in enumerate(inputs):
        files.append(folder / f"2101.{k:05d}.tar.gz")
        files[-1].write_bytes(data)
    out = _run("collect", "latex", str(ws), *map(str, files))
    assert len(out["papers"]) == 60 and out["errors"] >= len(hostile)
    failed = {e["file"].split(":", 1)[0] for e in out["error_items"]}
    documented = set(_documents(ws))
    assert all(p in failed or p in documented for p in out["papers"])
    assert list((ws / "tmp").iterdir()) == []  # every extraction removed


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return None


@pytest.fixture
def static_site(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "site"
    (root / "r05").mkdir(parents=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/r05/", root / "r05"
    finally:
        server.shutdown()
        server.server_close()


def test_40_broken_html_pages(ws: Path, static_site: tuple[str, Path]):
    base, folder = static_site
    rng = random.Random(3)
    good = ("<html><body><main><h1>章</h1><p>図表1-1-1-{k} 推移</p><img src='img{k}.png' alt='図表1-1-1-{k}'>"
            "<p>（出典）総務省</p><table><caption>図表1-1-1-{k}b 表</caption><tr><td>1</td></tr></table>"
            "</main></body></html>")
    hostile = ["<div>" * 100_000, "<html><body>" + "<p>図表1-" * 20_000, "\0\xff\xfe" * 1000, "",
               "<img src='" + "a" * 100_000 + "'>", "<meta charset='x-unknown'><img src='img0.png'>",
               "<html><base href='javascript:alert(1)'><img src='img1.png'></html>",
               "<img src='file:///etc/passwd'><img src='http://169.254.169.254/latest'>"]
    clean = good.format(k=1).replace("</main>", "<p>図表2-1 大きすぎる図</p><img src='img0.png' alt='図表2-1'></main>")
    pages = hostile + [clean] + [v.decode("utf-8", "replace") for k in range(31)
                                            for v in h.broken_variants(good.format(k=k).encode(), 1, seed=k)]
    links = "".join(f"<li><a href='p{k:02d}.html'>p{k}</a></li>" for k in range(len(pages)))
    (folder / "index.html").write_text(f"<html><body><main><ul>{links}</ul></main></body></html>",
                                       encoding="utf-8")
    for k, text in enumerate(pages):
        (folder / f"p{k:02d}.html").write_bytes(text.encode("utf-8", "replace"))
    images = [h.png_header(50_000, 50_000), h.png_bytes(), b"\x89PNG\r\n\x1a\n", b"<html>not an image</html>",
              h.huge_image_pdf()] + [bytes(rng.randrange(256) for _ in range(200)) for _ in range(27)]
    for k, data in enumerate(images):
        (folder / f"img{k}.png").write_bytes(data)
    out = _run("collect", "html", str(ws), base + "index.html", "--profile", "generic", "--delay", "0")
    assert out["pages"] >= 30  # the crawl went through the broken pages
    assert out["errors"] >= 3 and out["figures"] >= 1  # the one clean page's figure among them
    reasons = " ".join(e["reason"] for e in out["error_items"])
    assert "50000x50000 = 2,500,000,000 pixels" in reasons  # refused from its header, not decoded
