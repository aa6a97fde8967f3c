"""Throughput of `zuhyo eval`'s inference stage against an instant local OpenAI-compatible server.

Workload (issue: evaluation engine, Performance): N samples × 2 prompts × R runs at concurrency C, with real
chart PNGs (``--charts DIR``: the recorded figures used the 30 ChartQA test charts; default: the 14 charts the
tests render, tests/fixtures/chartqa/test/png), upscaled 2× (real charts: ~100–300 KB). In the same command:

1. ``bare``  — a bare aiohttp loop sending pre-built request bodies (images already base64'd) to the same
   server at the same concurrency: the ceiling for this server and machine;
2. ``zuhyo`` — the real runner (image preparation, prompt rendering, retries machinery, append-only store);
3. ``inspect_ai`` (optional, ``--peer inspect``) — the same requests through inspect_ai's OpenAI client path.

Prints requests/s, harness CPU ms per request (process user+sys time / requests) and ratios, as JSON too.
The server runs in its own process so its CPU is not counted.

    python bench/eval_throughput.py                       # full: 2053 samples × 2 × 3 = 12,318 requests
    python bench/eval_throughput.py --samples 300 --runs 1 --peer inspect --peer-requests 1000
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_CHARTS = ROOT / "tests" / "fixtures" / "chartqa" / "test" / "png"


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
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
    urls = [f"data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}" for p in files]
    out = []
    for i in range(n_requests):
        body = {"model": "fake", "temperature": 0.0, "max_tokens": 8192,
                "messages": [{"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": urls[i % len(urls)]}},
                    {"type": "text", "text": f"What is the value of series {i}?"}]}]}
        out.append(json.dumps(body).encode())
    return out


def run_zuhyo(jsonl: Path, url: str, out: Path, runs: int, concurrency: int) -> dict:
    from zuhyo.benchmarks.base import BenchmarkSource
    from zuhyo.evaluate.config import BenchmarkSpec, EvalConfig
    from zuhyo.evaluate.session import run_eval

    config = EvalConfig(benchmarks=(BenchmarkSpec("local", BenchmarkSource(path=jsonl)),),
                        models=(f"openai:fake@{url}",), out=out, prompts=("direct", "cot"), runs=runs,
                        concurrency=concurrency, judge=None)
    return run_eval(config)


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=2053)
    ap.add_argument("--charts", type=Path, default=FIXTURE_CHARTS,
                    help="folder of chart PNGs (e.g. the ChartQA release's test/png); default: the tests' charts")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3, help="repetitions of bare and zuhyo (medians reported)")
    ap.add_argument("--peer", choices=["none", "inspect"], default="none")
    ap.add_argument("--peer-requests", type=int, default=1000, help="requests for the peer (1 epoch)")
    ap.add_argument("--peer-full", action="store_true",
                    help="give the peer the full workload (all samples, 2 × runs epochs)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="zuhyo-bench-"))
    server, url = start_server()
    try:
        jsonl, files = build_workload(work, args.samples, args.charts)
        sizes = [p.stat().st_size for p in files]
        n_req = args.samples * 2 * args.runs
        print(f"workload: {args.samples} samples × 2 prompts × {args.runs} runs = {n_req} requests, "
              f"concurrency {args.concurrency}, PNG median {statistics.median(sizes) / 1024:.0f} KB "
              f"(min {min(sizes) / 1024:.0f}, max {max(sizes) / 1024:.0f})", flush=True)

        bodies = bare_bodies(files, n_req)
        bare = []
        for _ in range(args.repeats):
            c0 = cpu_s()
            wall = asyncio.run(bare_loop(url, bodies, args.concurrency))
            bare.append((wall, cpu_s() - c0))
        del bodies
        bare_wall = statistics.median(w for w, _ in bare)
        bare_cpu = statistics.median(c for _, c in bare)

        zuhyo = []
        for rep in range(args.repeats):
            c0 = cpu_s()
            t0 = time.perf_counter()
            summary = run_zuhyo(jsonl, url, work / f"run{rep}", args.runs, args.concurrency)
            zuhyo.append((time.perf_counter() - t0, cpu_s() - c0))
            inf = summary["inference"]
            assert inf["ok"] == n_req, inf
        z_wall = statistics.median(w for w, _ in zuhyo)
        z_cpu = statistics.median(c for _, c in zuhyo)

        result = {
            "requests": n_req, "concurrency": args.concurrency,
            "bare": {"req_per_s": n_req / bare_wall, "cpu_ms_per_req": 1000 * bare_cpu / n_req,
                     "runs_wall_s": [round(w, 3) for w, _ in bare]},
            "zuhyo": {"req_per_s": n_req / z_wall, "cpu_ms_per_req": 1000 * z_cpu / n_req,
                      "runs_wall_s": [round(w, 3) for w, _ in zuhyo]},
        }
        result["zuhyo_vs_bare"] = result["zuhyo"]["req_per_s"] / result["bare"]["req_per_s"]
        if args.peer == "inspect":
            epochs = 2 * args.runs if args.peer_full else 1
            n_samples = args.samples if args.peer_full else min(args.peer_requests, args.samples)
            n = n_samples * epochs
            wall, cpu = run_inspect(jsonl, url, n_samples, epochs, args.concurrency, work / "inspect-logs")
            result["inspect_ai"] = {"requests": n, "req_per_s": n / wall, "cpu_ms_per_req": 1000 * cpu / n}
            result["zuhyo_vs_inspect_ai"] = result["zuhyo"]["req_per_s"] / result["inspect_ai"]["req_per_s"]
        for name in ("bare", "zuhyo", "inspect_ai"):
            if name in result:
                r = result[name]
                print(f"{name:>10}: {r['req_per_s']:8.1f} req/s   {r['cpu_ms_per_req']:6.2f} ms CPU/request")
        print(f"zuhyo / bare = {result['zuhyo_vs_bare']:.2f}")
        if "zuhyo_vs_inspect_ai" in result:
            print(f"zuhyo / inspect_ai = {result['zuhyo_vs_inspect_ai']:.1f}×")
        print(json.dumps(result))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
