"""Throughput of `zuhyo eval`'s inference stage against an instant local OpenAI-compatible server.

Workload (issue: evaluation engine, Performance): N samples × 2 prompts × R runs at concurrency C, with real
chart PNGs (``--charts DIR``: the recorded figures used the 30 ChartQA test charts; default: the 14 charts the
tests render, tests/fixtures/chartqa/test/png), upscaled 2× (real charts: ~100–300 KB). In the same command:

1. ``bare``  — a bare aiohttp loop sending pre-built request bodies (images already base64'd) to the same
   server at the same concurrency: the ceiling for this server and machine;
2. ``zuhyo`` — the library, ``run_eval`` (image preparation, prompt rendering, retries machinery, store);
3. ``cli`` — the command line, ``zuhyo eval`` in a child process with its live rich progress bar drawn
   (``TTY_COMPATIBLE=1``, to /dev/null): the library plus the CLI's own costs, interpreter start included;
4. ``inspect_ai`` (optional, ``--peer inspect``) — the same requests through inspect_ai's OpenAI client path.

A second workload (``--workload sample-ja``), the one of issue 7 item 7: the bundled ``sample-ja`` benchmark
(44 small chart images) × Direct × 200 runs = 8,800 requests, where per-request overheads (such as a progress
bar recomputing its rate on every item) weigh most. ``--workload both`` (default) runs the two.

Prints requests/s, harness CPU ms per request (process user+sys time / requests; for ``cli`` the child's) and
ratios to ``bare`` measured in the same command, as JSON too. The server runs in its own process so its CPU is
not counted.

    python bench/eval_throughput.py                       # full: 2053 samples × 2 × 3 = 12,318 requests + sample-ja
    python bench/eval_throughput.py --workload charts --samples 300 --runs 1 --peer inspect --peer-requests 1000
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_CHARTS = ROOT / "tests" / "fixtures" / "chartqa" / "test" / "png"


def cpu_s(who: int = resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def build_workload(workdir: Path, n_samples: int, chart_dir: Path) -> tuple[Path, list[Path]]:
    """A local zuhyo JSONL benchmark of n samples cycling over the upscaled charts of ``chart_dir``."""
    from PIL import Image

    img_dir = workdir / "images"
    img_dir.mkdir(parents=True)
    charts = sorted(chart_dir.glob("*.png"))
    if not charts:
        sys.exit(f"no charts (*.png) found in {chart_dir}")
    files = []
    for src in charts:
        with Image.open(src) as im:
            im = im.convert("RGB").resize((im.width * 2, im.height * 2), Image.Resampling.LANCZOS)
            dst = img_dir / src.name
            im.save(dst, format="PNG", compress_level=6)
            files.append(dst)
    with (workdir / "bench.jsonl").open("w") as f:
        for i in range(n_samples):
            img = files[i % len(files)]
            f.write(json.dumps({"id": f"s{i:05d}", "benchmark": "throughput",
                                "question": f"What is the value of series {i}?", "answers": [str(i)],
                                "image": {"path": f"images/{img.name}"}}) + "\n")
    return workdir / "bench.jsonl", files


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "zuhyo.testing.fake_openai", "--port", "0",
                             "--default-answer", "42"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(line.split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


async def bare_loop(url: str, bodies: list[bytes], concurrency: int) -> float:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        it = iter(bodies)

        async def worker() -> None:
            for body in it:
                async with session.post(url + "/chat/completions", data=body,
                                        headers={"Content-Type": "application/json"}) as r:
                    await r.read()

        t = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t


def bare_bodies(files: list[Path], n_requests: int) -> list[bytes]:
    urls = [f"data:image/{p.suffix.lstrip('.').replace('jpg', 'jpeg')};base64,"
            f"{base64.b64encode(p.read_bytes()).decode()}" for p in files]
    out = []
    for i in range(n_requests):
        body = {"model": "fake", "temperature": 0.0, "max_tokens": 8192,
                "messages": [{"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": urls[i % len(urls)]}},
                    {"type": "text", "text": f"What is the value of series {i}?"}]}]}
        out.append(json.dumps(body).encode())
    return out


@dataclass(frozen=True)
class Workload:
    """What each contender runs: one benchmark, its prompts and runs, and the images for the bare loop."""

    name: str
    bench: str
    path: Path | None
    prompts: tuple[str, ...]
    runs: int
    images: list[Path]
    n_samples: int

    @property
    def requests(self) -> int:
        return self.n_samples * len(self.prompts) * self.runs


def sample_ja_workload(runs: int) -> Workload:
    """The bundled sample-ja benchmark (small chart images), Direct prompt only."""
    from zuhyo.benchmarks.base import BenchmarkSource, load_benchmark

    result = load_benchmark("sample-ja", BenchmarkSource())
    images = [Path(str(s.image.path)) if Path(str(s.image.path)).is_absolute()  # type: ignore[union-attr]
              else Path(result.base_dir or ".") / str(s.image.path) for s in result.samples]  # type: ignore[union-attr]
    return Workload("sample-ja", "sample-ja", None, ("direct",), runs, images, len(result.samples))


def run_zuhyo(w: Workload, url: str, out: Path, concurrency: int) -> dict:
    from zuhyo.benchmarks.base import BenchmarkSource
    from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
    from zuhyo.evaluate.session import run_eval

    config = EvalConfig(benchmarks=(BenchmarkSpec(w.bench, BenchmarkSource(path=w.path)),),
                        models=(f"openai:fake@{url}",), out=out, prompts=w.prompts, runs=w.runs,
                        concurrency=concurrency, judge=None)
    return run_eval(config)


def run_cli(w: Workload, url: str, out: Path, concurrency: int) -> tuple[float, float]:
    """``zuhyo eval`` in a child process with its live progress bar drawn; (wall s, child CPU s)."""
    cmd = [sys.executable, "-m", "zuhyo", "eval", "--bench", w.bench, "--model", f"openai:fake@{url}",
           "--prompt", ",".join(w.prompts), "--runs", str(w.runs), "--concurrency", str(concurrency),
           "--judge", "none", "--out", str(out), "--json"]
    if w.path is not None:
        cmd += ["--path", str(w.path)]
    env = {**os.environ, "TTY_COMPATIBLE": "1", "COLUMNS": "120"}
    c0, t0 = cpu_s(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, cpu_s(resource.RUSAGE_CHILDREN) - c0
    if proc.returncode != 0:
        raise SystemExit(f"zuhyo eval failed ({proc.returncode}): {' '.join(cmd)}")
    inf = json.loads(proc.stdout.strip().splitlines()[-1])["inference"]
    if inf["ok"] != w.requests:
        raise SystemExit(f"zuhyo eval answered {inf['ok']} of {w.requests} requests")
    return wall, cpu


def run_inspect(jsonl: Path, url: str, n_samples: int, epochs: int, concurrency: int,
                logdir: Path) -> tuple[float, float]:
    """inspect_ai's OpenAI provider pointed at the same server, same samples; ``epochs`` repeats each sample
    (2 prompts × runs requests per sample in zuhyo). Returns (wall s, cpu s)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample as ISample
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
    from inspect_ai.solver import generate

    rows = [json.loads(line) for line in jsonl.read_text().splitlines()][:n_samples]
    samples = [ISample(id=r["id"], target=r["answers"][0], input=[ChatMessageUser(content=[
        ContentImage(image=str(jsonl.parent / r["image"]["path"])), ContentText(text=r["question"])])])
        for r in rows]
    # inspect's generic OpenAI-compatible provider (chat completions): openai-api/<service>/<model>.
    os.environ["ZUHYOBENCH_API_KEY"] = "unused"
    os.environ["ZUHYOBENCH_BASE_URL"] = url
    task = Task(dataset=samples, solver=generate())
    c0, t0 = cpu_s(), time.perf_counter()
    logs = inspect_eval(task, model="openai-api/zuhyobench/fake", max_connections=concurrency,
                        log_dir=str(logdir), display="none", temperature=0.0, max_tokens=8192, epochs=epochs)
    wall, cpu = time.perf_counter() - t0, cpu_s() - c0
    # Guard against measuring failures: every sample must have a completion from the server.
    log = logs[0]
    if log.status != "success" or log.results is None or log.results.completed_samples != len(samples) * epochs:
        message = log.error.message if log.error else "incomplete"
        raise SystemExit(f"inspect_ai run did not complete: status={log.status}: {message}")
    return wall, cpu


def measure(w: Workload, url: str, work: Path, concurrency: int, repeats: int) -> dict:
    """Medians over ``repeats`` of bare, library and CLI on one workload, interleaved so drift hits all three."""
    n = w.requests
    bodies = bare_bodies(w.images, n)
    runs: dict[str, list[tuple[float, float]]] = {"bare": [], "zuhyo": [], "cli": []}
    for rep in range(repeats):
        c0 = cpu_s()
        runs["bare"].append((asyncio.run(bare_loop(url, bodies, concurrency)), cpu_s() - c0))
        c0, t0 = cpu_s(), time.perf_counter()
        summary = run_zuhyo(w, url, work / f"{w.name}-lib{rep}", concurrency)
        runs["zuhyo"].append((time.perf_counter() - t0, cpu_s() - c0))
        assert summary["inference"]["ok"] == n, summary["inference"]
        runs["cli"].append(run_cli(w, url, work / f"{w.name}-cli{rep}", concurrency))
    result: dict = {"requests": n, "concurrency": concurrency}
    for name, vals in runs.items():
        wall, cpu = statistics.median(v for v, _ in vals), statistics.median(c for _, c in vals)
        result[name] = {"req_per_s": n / wall, "cpu_ms_per_req": 1000 * cpu / n,
                        "runs_wall_s": [round(v, 3) for v, _ in vals]}
    for name in ("zuhyo", "cli"):
        result[f"{name}_vs_bare"] = result[name]["req_per_s"] / result["bare"]["req_per_s"]
    return result


def _print(name: str, result: dict) -> None:
    print(f"[{name}] {result['requests']} requests at concurrency {result['concurrency']}")
    for who in ("bare", "zuhyo", "cli", "inspect_ai"):
        if who in result:
            r = result[who]
            ratio = f"   {result[who + '_vs_bare']:.2f} of bare" if who + "_vs_bare" in result else ""
            print(f"{who:>10}: {r['req_per_s']:8.1f} req/s   {r['cpu_ms_per_req']:6.2f} ms CPU/request{ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", choices=["charts", "sample-ja", "both"], default="both")
    ap.add_argument("--samples", type=int, default=2053)
    ap.add_argument("--charts", type=Path, default=FIXTURE_CHARTS,
                    help="folder of chart PNGs (e.g. the ChartQA release's test/png); default: the tests' charts")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sample-ja-runs", type=int, default=200, help="runs of the sample-ja workload (44 × runs)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3, help="repetitions of bare, zuhyo and cli (medians reported)")
    ap.add_argument("--peer", choices=["none", "inspect"], default="none")
    ap.add_argument("--peer-requests", type=int, default=1000, help="requests for the peer (1 epoch)")
    ap.add_argument("--peer-full", action="store_true",
                    help="give the peer the full workload (all samples, 2 × runs epochs)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="zuhyo-bench-"))
    server, url = start_server()
    results: dict = {}
    try:
        if args.workload in ("charts", "both"):
            jsonl, files = build_workload(work, args.samples, args.charts)
            sizes = [p.stat().st_size for p in files]
            w = Workload("charts", "local", jsonl, ("direct", "cot"), args.runs, files, args.samples)
            print(f"charts: {args.samples} samples × 2 prompts × {args.runs} runs = {w.requests} requests, "
                  f"concurrency {args.concurrency}, PNG median {statistics.median(sizes) / 1024:.0f} KB "
                  f"(min {min(sizes) / 1024:.0f}, max {max(sizes) / 1024:.0f})", flush=True)
            result = measure(w, url, work, args.concurrency, args.repeats)
            if args.peer == "inspect":
                epochs = 2 * args.runs if args.peer_full else 1
                n_samples = args.samples if args.peer_full else min(args.peer_requests, args.samples)
                n = n_samples * epochs
                wall, cpu = run_inspect(jsonl, url, n_samples, epochs, args.concurrency, work / "inspect-logs")
                result["inspect_ai"] = {"requests": n, "req_per_s": n / wall, "cpu_ms_per_req": 1000 * cpu / n}
                result["zuhyo_vs_inspect_ai"] = result["zuhyo"]["req_per_s"] / result["inspect_ai"]["req_per_s"]
            results["charts"] = result
            _print("charts", result)
        if args.workload in ("sample-ja", "both"):
            w = sample_ja_workload(args.sample_ja_runs)
            sizes = [p.stat().st_size for p in w.images]
            print(f"sample-ja: {w.n_samples} samples × Direct × {w.runs} runs = {w.requests} requests, "
                  f"concurrency {args.concurrency}, image median {statistics.median(sizes) / 1024:.0f} KB", flush=True)
            results["sample-ja"] = measure(w, url, work, args.concurrency, args.repeats)
            _print("sample-ja", results["sample-ja"])
        print(json.dumps(results))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
