"""Peak memory of reading the run store: the old whole-file read vs the streamed read, on one 1M-record log.

Writes a ``predictions.jsonl`` of ``--records`` realistic prediction records (CoT-sized replies), then reads it
in fresh child processes, one per mode, each validating every record and reporting its own peak RSS:

- ``baseline`` — the interpreter with zuhyo's store imported, reading nothing (the floor);
- ``whole-file`` — the read before issue 8: ``f.read()`` of the whole file, ``split(b"\\n")``, then each line;
- ``streamed`` — :func:`zuhyo.evaluate.store.read_records` as it is now: one line at a time.

Both readers validate every record into a ``PredictionRecord`` and keep only a count, so the difference is the
reader's own memory. (``RunStore.latest_predictions`` keeps one record per distinct key on top of this: its
memory follows the number of distinct requests, not the log's size.)

    python bench/store_memory.py [--records 1000000] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("baseline", "whole-file", "streamed")


def write_store(path: Path, n: int) -> None:
    from zuhyo.evaluate.records import PredictionRecord

    reply = ("The chart shows the yearly values; the bar for 2019 is the tallest and the line peaks in March. "
             "Reading the axis, the value is about 42.5. Answer: 42.5")
    with path.open("wb") as f:
        batch = []
        for i in range(n):
            rec = PredictionRecord(benchmark="chartqa", sample_id=f"human/{i // 6:06d}", model="openai:m@http://x/v1",
                                   prompt="cot" if i % 2 else "direct", run_index=(i // 2) % 3, status="ok",
                                   response=reply, answer="42.5", outcome="answered", latency_s=0.8,
                                   finish_reason="stop", usage={"prompt_tokens": 812, "completion_tokens": 61},
                                   prompt_version="v1", fingerprint="f" * 16, created=1.7e9 + i)
            batch.append(rec.model_dump_json().encode() + b"\n")
            if len(batch) == 10_000:
                f.write(b"".join(batch))
                batch.clear()
        f.write(b"".join(batch))


def _read_whole_file(path: Path) -> int:
    """The reader before streaming (store.py before issue 8), validating every line."""
    from pydantic import ValidationError

    from zuhyo.evaluate.records import PredictionRecord

    with path.open("rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] != b"":
        lines = lines[:-1]
    n = 0
    for raw in lines:
        if not raw.strip():
            continue
        try:
            PredictionRecord.model_validate_json(raw)
            n += 1
        except ValidationError:
            pass
    return n


def _read_streamed(path: Path) -> int:
    from zuhyo.evaluate.records import PredictionRecord
    from zuhyo.evaluate.store import read_records

    return sum(1 for _, rec, _ in read_records(path, PredictionRecord) if rec is not None)


def child(mode: str, path: Path) -> None:
    import zuhyo.evaluate.store  # noqa: F401 - the same imports in every mode

    t0 = time.perf_counter()
    n = {"baseline": lambda p: 0, "whole-file": _read_whole_file, "streamed": _read_streamed}[mode](path)
    wall = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"mode": mode, "records": n, "peak_rss_mib": round(peak_kib / 1024, 1), "wall_s": round(wall, 2)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--dir", type=Path, default=None, help="Where to write the store (default: a temp folder).")
    ap.add_argument("--keep", action="store_true", help="Keep the generated store.")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.path)
        return
    folder = Path(tempfile.mkdtemp(prefix="zuhyo-store-", dir=args.dir))
    path = folder / "predictions.jsonl"
    t0 = time.perf_counter()
    write_store(path, args.records)
    size_mib = path.stat().st_size / 2**20
    print(f"store: {args.records:,} records, {size_mib:,.1f} MiB ({time.perf_counter() - t0:.1f}s to write)")
    print(f"{'reader':<12} {'records':>10} {'peak RSS MiB':>13} {'wall s':>7}")
    try:
        for mode in MODES:
            out = subprocess.run([sys.executable, __file__, "--child", mode, "--path", str(path)],
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out)
            print(f"{mode:<12} {r['records']:>10,} {r['peak_rss_mib']:>13,.1f} {r['wall_s']:>7.1f}")
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
            os.rmdir(folder)


if __name__ == "__main__":
    main()
