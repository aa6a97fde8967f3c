"""`zuhyo filter` at 5k, 20k and 100k figures: wall time, peak memory of the driver and of its whole process tree,
and (with ``--ray``) the same run on a local Ray cluster giving identical decisions.

Issue 22 "Scale". For each size N the first N items of a `bench/scale_corpus.py` corpus are hard-linked into a
folder, collected into a fresh workspace (`zuhyo collect folder`, timed too) and filtered with
`zuhyo filter run WS --classifier none --json` as a user runs it, in its own process. A sampler (psutil, every
0.1 s) records the driver's resident memory, its anonymous part (the RSS also counts the pages it has read of
the thumbnails' memory-mapped file, which the kernel may drop), and the sum over the driver and all its
descendants (the local worker processes). The copies' recall and the links' precision are read back from
`zuhyo figures WS --stage filter --decision drop --json` (each drop's ``duplicate_of``) against the manifest.

    python bench/scale_corpus.py /tmp/zuhyo_scale --n 100000
    python bench/filter_scale.py /tmp/zuhyo_scale --sizes 5000 20000 100000 --work /tmp/zuhyo_scale_runs
    python bench/filter_scale.py /tmp/zuhyo_scale --sizes 5000 --ray      # + `ray start --head`, same decisions

With ``--ray`` a head node is started on this machine (``ray start --head --num-cpus C``), the collected
workspace is copied and filtered with ``--executor ray:auto``, and the two runs' drops and ``duplicate_of``
pairs are compared; Ray's own processes are not the driver's children, so only the driver's memory is reported
for that run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _anonymous_mib(pid: int) -> float:
    """The process's resident anonymous memory (``RssAnon``, Linux), MiB; 0 where it cannot be read. Its RSS also
    counts the pages of mapped files it has read - the thumbnails' memory-mapped ``.npy`` (48 KB an image), which
    the kernel can drop at any time - so the driver's own memory is this."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_measured(args: list[str]) -> dict[str, Any]:
    """Run ``args``; wall seconds, exit status, stdout, and the peak RSS (MiB) of the process and of its tree, and
    the peak anonymous memory of the process (:func:`_anonymous_mib`)."""
    import psutil

    began = time.perf_counter()
    # Its output to files, not pipes: the loop below reads no pipe while it runs, and a command that writes more
    # than a pipe holds (64 KiB: a warning for each of a thousand files) would block on it for ever.
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        proc = psutil.Popen(args, stdout=out_file, stderr=err_file, text=True)
        peak_driver = peak_tree = peak_anon = 0.0
        while proc.poll() is None:
            peak_anon = max(peak_anon, _anonymous_mib(proc.pid))
            try:
                driver = proc.memory_info().rss
                tree = driver
                for child in proc.children(recursive=True):
                    try:
                        tree += child.memory_info().rss
                    except psutil.Error:  # a worker that ended between listing and reading
                        pass
            except psutil.Error:
                break
            peak_driver, peak_tree = max(peak_driver, driver / 2**20), max(peak_tree, tree / 2**20)
            time.sleep(0.1)
        proc.wait()
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{err[-3000:]}")
    return {"seconds": round(time.perf_counter() - began, 1), "peak_driver_mib": round(peak_driver),
            "peak_driver_anon_mib": round(peak_anon), "peak_tree_mib": round(peak_tree), "stdout": out}


def zuhyo(*args: str) -> list[str]:
    return [sys.executable, "-m", "zuhyo", *args]


def link_first(corpus: Path, files: list[str], n: int, folder: Path) -> None:
    """Hard links to the first ``n`` corpus files in ``folder`` (no copies of the bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in files[:n]:
        target = folder / name
        if not target.exists():
            os.link(corpus / name, target)


def drops(ws: Path) -> dict[str, str]:
    """``{dropped sha256: sha256 of the figure it duplicates}`` of the current filter decisions."""
    proc = subprocess.run(zuhyo("figures", str(ws), "--stage", "filter", "--decision", "drop", "--json"),
                          capture_output=True, text=True, check=True)
    doc = json.loads(proc.stdout)
    return {f["sha256"]: f["duplicate_of"]["sha256"] for f in doc["figures"] if "duplicate_of" in f}


def quality(corpus: Path, files: list[str], truth: dict[str, str], links: dict[str, str]) -> dict[str, Any]:
    """Recall of the copies (dropped as a duplicate of their original) and precision of the links."""
    sha = {name: hashlib.sha256((corpus / name).read_bytes()).hexdigest() for name in files}
    group = {sha[name]: sha[truth.get(name, name)] for name in files}  # each file's original
    copies = [sha[c] for c in truth if c in sha]
    found = sum(1 for c in copies if links.get(c) is not None and group.get(links[c]) == group[c])
    right = sum(1 for a, b in links.items() if group.get(a) == group.get(b))
    return {"copies": len(copies), "recall": round(found / len(copies), 4) if copies else None,
            "links": len(links), "precision": round(right / len(links), 4) if links else None}


def start_ray(cpus: int) -> None:
    subprocess.run(["ray", "stop", "--force"], capture_output=True)
    subprocess.run(["ray", "start", "--head", f"--num-cpus={cpus}", "--disable-usage-stats",
                    "--include-dashboard=false"], check=True, capture_output=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("corpus", type=Path)
    p.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 100000])
    p.add_argument("--work", type=Path, default=Path("/tmp/zuhyo_scale_runs"))
    p.add_argument("--ray", action="store_true", help="also run each size on a local Ray cluster and compare")
    p.add_argument("--ray-cpus", type=int, default=os.cpu_count() or 2)
    p.add_argument("--json", type=Path, help="write the results here")
    args = p.parse_args()
    manifest = json.loads((args.corpus / "manifest.json").read_text())
    files, truth = manifest["files"], manifest["duplicate_of"]
    results = []
    for n in args.sizes:
        if n > len(files):
            raise SystemExit(f"the corpus has {len(files)} items, fewer than {n}: make it with --n {n}")
        folder, ws = args.work / f"images-{n}", args.work / f"ws-{n}"
        link_first(args.corpus, files, n, folder)
        shutil.rmtree(ws, ignore_errors=True)
        subprocess.run(zuhyo("init", str(ws)), check=True, capture_output=True)
        collect = run_measured(zuhyo("collect", "folder", str(ws), str(folder), "--json"))
        fresh = args.work / f"ws-{n}-collected"
        shutil.rmtree(fresh, ignore_errors=True)
        if args.ray:
            shutil.copytree(ws, fresh)
        run = run_measured(zuhyo("filter", "run", str(ws), "--classifier", "none", "--json"))
        links = drops(ws)
        row: dict[str, Any] = {"n": n, "collect_s": collect["seconds"], "filter_s": run["seconds"],
                               "filter_peak_driver_mib": run["peak_driver_mib"],
                               "filter_peak_driver_anon_mib": run["peak_driver_anon_mib"],
                               "filter_peak_tree_mib": run["peak_tree_mib"],
                               **quality(args.corpus, files[:n], truth, links)}
        if args.ray:
            start_ray(args.ray_cpus)
            try:
                ray_run = run_measured(zuhyo("filter", "run", str(fresh), "--classifier", "none", "--executor",
                                             "ray:auto", "--json"))
            finally:
                subprocess.run(["ray", "stop", "--force"], capture_output=True)
            ray_links = drops(fresh)
            row.update(ray_filter_s=ray_run["seconds"], ray_peak_driver_mib=ray_run["peak_driver_mib"],
                       ray_identical=ray_links == links, ray_links=len(ray_links))
        results.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
