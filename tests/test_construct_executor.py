"""`zuhyo.construct.executor.map_items`: local processes and a real local Ray instance, in order, errors as values."""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator

import pytest

from zuhyo.construct.executor import IN_PROCESS_BELOW, ExecutorError, ItemError, map_items, parse_executor


def sqrt_and_pid(x: float) -> tuple[float, int]:
    return math.sqrt(x), os.getpid()


def test_local_keeps_order_runs_on_worker_processes_and_returns_errors_as_values() -> None:
    items = [4.0, -1.0, *range(40)]
    seen: list[int] = []
    out = map_items(sqrt_and_pid, items, progress=lambda i, _r: seen.append(i), chunksize=5)
    assert isinstance(out[1], ItemError) and out[1].index == 1 and out[1].error == "ValueError: math domain error"
    assert [r[0] for i, r in enumerate(out) if i != 1] == [2.0, *(math.sqrt(v) for v in range(40))]
    assert sorted(seen) == list(range(42))
    pids = {r[1] for r in out if not isinstance(r, ItemError)}
    if (os.cpu_count() or 1) > 1:
        assert os.getpid() not in pids  # the work ran in the pool, not in the driver


def test_a_handful_of_items_runs_in_process_and_empty_input_is_empty() -> None:
    out = map_items(sqrt_and_pid, [1.0, 9.0][:IN_PROCESS_BELOW - 1])
    assert out == [(1.0, os.getpid()), (3.0, os.getpid())]
    assert map_items(sqrt_and_pid, [], executor="ray:nowhere:1") == []  # nothing to do: Ray not even imported


def _streamed_map(executor: str, in_flight: int, chunksize: int) -> None:
    """``map_items`` over a generator with ``in_flight``: the same results in order, errors as values, and the
    generator asked for items only as tasks finish (never more than the tasks in flight hold, plus the handful
    looked at first to tell a small map from a pool's)."""
    pulled = 0
    done = 0
    most_ahead = 0

    def items() -> Iterator[float]:
        nonlocal pulled, most_ahead
        for v in [4.0, -1.0, *range(60)]:
            pulled += 1
            most_ahead = max(most_ahead, pulled - done)
            yield float(v)

    def progress(_i: int, _r: object) -> None:
        nonlocal done
        done += 1

    out = map_items(sqrt_and_pid, items(), executor=executor, progress=progress, chunksize=chunksize,
                    in_flight=in_flight)
    assert isinstance(out[1], ItemError) and out[1].index == 1 and out[1].error == "ValueError: math domain error"
    assert [r[0] for i, r in enumerate(out) if i != 1] == [2.0, *(math.sqrt(v) for v in range(60))]
    assert done == 62 and pulled == 62
    assert most_ahead <= max(IN_PROCESS_BELOW, in_flight * chunksize) + chunksize


def test_local_streams_a_generator_with_a_bounded_number_of_tasks_in_flight() -> None:
    _streamed_map("local", in_flight=2, chunksize=3)
    assert map_items(sqrt_and_pid, iter([]), in_flight=4) == []
    assert map_items(sqrt_and_pid, iter([9.0]), in_flight=4) == [(3.0, os.getpid())]  # a handful: in-process
    with pytest.raises(ValueError, match="in_flight must be at least 1"):
        map_items(sqrt_and_pid, [1.0], in_flight=0)


def first_slowly(x: float) -> float:
    """sqrt, the first item a while later than the rest: the later chunks finish first."""
    import time

    if x == 0.0:
        time.sleep(1.0)
    return math.sqrt(x)


def _kept_in_order(executor: str, in_flight: int, chunksize: int, out_of_order: bool) -> None:
    """``keep`` is called once per item, in index order although the items finish out of order, and the map
    returns what it returned; no more whole results wait for an earlier one than the tasks in flight hold."""
    done = 0
    calls: list[int] = []
    most_waiting = 0
    first_kept_after = -1

    def progress(_i: int, _r: object) -> None:
        nonlocal done
        done += 1

    def keep(index: int, result: object) -> tuple[int, object]:
        nonlocal most_waiting, first_kept_after
        if index == 0:
            first_kept_after = done
        calls.append(index)
        most_waiting = max(most_waiting, done - len(calls))
        return index, result

    items = [0.0, *(float(v) for v in range(1, 48))]
    out = map_items(first_slowly, iter(items), executor=executor, progress=progress, chunksize=chunksize,
                    in_flight=in_flight, keep=keep)
    assert calls == list(range(48))
    assert out == [(i, math.sqrt(v)) for i, v in enumerate(items)]
    if out_of_order:
        assert first_kept_after > chunksize  # later chunks finished first, and waited for the first
    assert most_waiting <= in_flight * chunksize


def test_keep_sees_each_result_in_order_as_soon_as_the_earlier_ones_are_in() -> None:
    _kept_in_order("local", in_flight=4, chunksize=3, out_of_order=(os.cpu_count() or 1) > 1)
    out = map_items(sqrt_and_pid, [4.0, 9.0], keep=lambda i, r: (i, r[0]))  # a handful, in-process
    assert out == [(0, 2.0), (1, 3.0)]
    assert map_items(sqrt_and_pid, [float(v) for v in range(20)], keep=lambda i, r: i) == list(range(20))


def test_executor_specs() -> None:
    assert parse_executor("local") == ("local", None)
    assert parse_executor("ray") == ("ray", None)
    assert parse_executor("ray:10.0.0.5:6379") == ("ray", "10.0.0.5:6379")
    for bad in ("ray:", "dask", ""):
        with pytest.raises(ExecutorError, match="unknown executor"):
            parse_executor(bad)


def test_ray_not_installed_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray → ImportError
    with pytest.raises(ExecutorError, match=r"--executor ray needs Ray: pip install 'zuhyo\[ray\]'"):
        map_items(sqrt_and_pid, [1.0], executor="ray")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[object]:
    """A real local Ray instance with one CPU (temp dir short: Ray's socket paths must stay under 108 bytes)."""
    ray = pytest.importorskip("ray", reason="Ray (the [ray] extra) is not installed")
    tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    # workers import this test module by name (a real cluster has zuhyo installed on every node, docs/scaling.md)
    ray.init(num_cpus=1, include_dashboard=False, _temp_dir=tmp, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(sys.path)}})
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


def test_ray_keeps_order_runs_on_ray_workers_and_returns_errors_as_values(local_ray: object) -> None:
    items = [4.0, -1.0, *range(30)]
    seen: list[int] = []
    out = map_items(sqrt_and_pid, items, executor="ray", progress=lambda i, _r: seen.append(i), chunksize=4)
    assert isinstance(out[1], ItemError) and out[1].error == "ValueError: math domain error"
    assert [r[0] for i, r in enumerate(out) if i != 1] == [2.0, *(math.sqrt(v) for v in range(30))]
    assert sorted(seen) == list(range(32))
    assert os.getpid() not in {r[1] for r in out if not isinstance(r, ItemError)}


def test_ray_streams_a_generator_with_a_bounded_number_of_tasks_in_flight(local_ray: object) -> None:
    _streamed_map("ray", in_flight=2, chunksize=4)


def test_ray_keeps_each_result_in_order_as_soon_as_the_earlier_ones_are_in(local_ray: object) -> None:
    _kept_in_order("ray", in_flight=4, chunksize=3, out_of_order=False)  # Ray's workers may start one by one


def test_chart_features_on_ray_equal_the_local_ones(local_ray: object) -> None:
    """The filter's real work function (image bytes in, features out) gives the same numbers on a Ray worker."""
    import io

    import numpy as np
    from PIL import Image

    from zuhyo.construct.filter.chart_features import image_features

    rng = np.random.default_rng(0)
    imgs = []
    for i in range(10):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (40 + i, 60, 3), dtype=np.uint8)).save(buf, format="PNG")
        imgs.append((buf.getvalue(), False))
    imgs.insert(3, (b"not an image", False))
    on_ray = map_items(image_features, imgs, executor="ray")
    local = map_items(image_features, imgs, executor="local")
    assert isinstance(on_ray[3], ItemError) and "UnidentifiedImageError" in on_ray[3].error
    assert [r for r in on_ray if not isinstance(r, ItemError)] == [r for r in local if not isinstance(r, ItemError)]


def test_filter_train_on_ray_gives_the_local_model(local_ray: object, tmp_path: object) -> None:
    """The chart classifier's training maps its features over a real Ray instance: same model as locally."""
    pytest.importorskip("sqlalchemy", reason="the [build] extra is needed")
    from pathlib import Path

    from test_construct_classifier import figure_ids, write_corpus, write_labels

    from zuhyo.construct.collect.folder import collect_folder
    from zuhyo.construct.filter.chart_classifier import run_chart_check, train_chart_classifier
    from zuhyo.construct.workspace import Workspace

    root = Path(str(tmp_path))
    truth = write_corpus(root / "imgs", 8, 6, 2)
    labels = write_labels(root / "labels.csv", truth)
    with Workspace.init(root / "ws") as w:
        collect_folder(w, root / "imgs")
        on_ray = train_chart_classifier(w, labels, executor="ray")
        local = train_chart_classifier(w, labels, executor="local")
        counts = run_chart_check(w, list(figure_ids(root / "ws").values()), "features", "ray", None)
    assert on_ray["used"] == 16 and on_ray["errors"] == 0
    assert on_ray["model_id"] == local["model_id"] and on_ray["held_out"] == local["held_out"]
    assert counts["checked"] == 16 and counts["errors"] == 0


def test_near_duplicate_features_and_verification_on_ray_equal_the_local_ones(local_ray: object) -> None:
    """`zuhyo filter`'s near-duplicate work on Ray: the per-image features (decode, thumbnail, descriptors,
    profiles) and the verified pairs (chunks carrying their thumbnails, not the driver's memory map) are the
    local ones."""
    pytest.importorskip("matplotlib", reason="the charts are rendered with matplotlib")
    from test_construct_filter import chart_corpus

    from zuhyo.construct.filter.checks import inspect_image
    from zuhyo.construct.filter.feature_store import stack_features
    from zuhyo.construct.filter.near_duplicates import verified_pairs

    cc = chart_corpus()
    datas = [cc.render_chart(0), cc.render_chart(4), cc.near_duplicate(0, seed=101), cc.render_chart(60),
             cc.render_chart(64), cc.near_duplicate(64, seed=303), cc.render_chart(8), cc.render_chart(68),
             cc.render_chart(120)]
    on_ray = map_items(inspect_image, datas, executor="ray")
    local = map_items(inspect_image, datas, executor="local")
    assert on_ray == local
    arrays = stack_features(on_ray)
    pairs = [(i, j) for i in range(len(datas)) for j in range(i + 1, len(datas))]
    found_ray = verified_pairs(arrays, pairs, executor="ray", chunk=8)
    found_here = verified_pairs(arrays, pairs)
    assert found_ray == found_here
    assert {(p.i, p.j) for p in found_ray} == {(0, 2), (4, 5)}


@pytest.mark.timeout(120)
def test_local_workers_survive_a_driver_whose_opencv_started_its_thread_pool() -> None:
    """A multi-threaded OpenCV call in the driver (RapidOCR makes them) starts OpenCV's thread pool; a worker
    forked from that process deadlocked on its first OpenCV call. Local pools now fork from a fresh server."""
    cv2 = pytest.importorskip("cv2", reason="the [build] extra installs OpenCV")
    import io

    import numpy as np
    from PIL import Image

    from zuhyo.construct.filter.checks import inspect_image

    threads = cv2.getNumThreads()
    cv2.setNumThreads(2)
    try:
        big = np.random.default_rng(0).integers(0, 255, (2000, 2000, 3), dtype=np.uint8)
        cv2.GaussianBlur(big, (31, 31), 0)  # parallel_for: the pool's threads exist now
    finally:
        cv2.setNumThreads(threads)
    images = []
    for i in range(IN_PROCESS_BELOW + 4):
        buf = io.BytesIO()
        Image.fromarray(np.full((600, 800, 3), 20 * i, dtype=np.uint8)).save(buf, format="PNG")
        images.append(buf.getvalue())
    out = map_items(inspect_image, images, executor="local")
    assert [getattr(r, "width", None) for r in out] == [800] * len(images)


def resident_given_back_on_free(_item: int) -> int:
    """Runs in a worker: how much resident memory freeing a 24 MB buffer (written) gives back (bytes)."""
    import numpy as np

    def resident() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    buffer = np.ones(24 << 20, dtype=np.uint8)
    held = resident()
    del buffer
    return held - resident()


def test_a_worker_keeps_what_it_frees_for_its_next_task_on_glibc() -> None:
    """Local workers keep freed memory for the next task (glibc ``mallopt``): fresh from the fork server, each
    buffer of a few MB was mapped, unmapped and faulted in again at every call (22 % of a near-duplicate second
    look's time). A 24 MB buffer freed in a worker stays resident, where glibc's defaults give it back at once."""
    import platform

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc's mallopt only")
    given_back = map_items(resident_given_back_on_free, list(range(2 * IN_PROCESS_BELOW)), chunksize=1)
    assert all(isinstance(g, int) and g < 4 << 20 for g in given_back), given_back


def opencv_threads_inside_one_thread_block(_item: int) -> tuple[int, int]:
    """Runs in a worker: OpenCV's thread count as the worker starts its task, and inside the near-duplicate
    features' one-thread block."""
    import cv2

    from zuhyo.construct.filter.near_duplicates import _opencv_one_thread

    before = cv2.getNumThreads()
    with _opencv_one_thread():
        inside = cv2.getNumThreads()
    return before, inside


def test_a_local_worker_runs_opencv_on_one_thread_from_its_start() -> None:
    """A local worker's OpenCV is on one thread before its first task (the fork server loaded it): the
    near-duplicate features' per-image one-thread block then sets nothing, rather than making and unmaking the
    worker's OpenCV thread pool at every image. In the driver the block still gives back the count it found."""
    pytest.importorskip("cv2")
    import cv2

    from zuhyo.construct.filter.near_duplicates import _opencv_one_thread

    found = map_items(opencv_threads_inside_one_thread_block, list(range(2 * IN_PROCESS_BELOW)), chunksize=1)
    assert found == [(1, 1)] * (2 * IN_PROCESS_BELOW)
    threads = cv2.getNumThreads()
    cv2.setNumThreads(2)
    try:
        with _opencv_one_thread():
            assert cv2.getNumThreads() == 1
        assert cv2.getNumThreads() == 2
    finally:
        cv2.setNumThreads(threads)


def test_freed_memory_is_given_back_after_a_local_map_on_glibc() -> None:
    """After a map the driver trims glibc's heaps (the freed items and results would otherwise keep its resident
    memory at every map's high-water mark); where the C library has no malloc_trim it does nothing."""
    import platform

    from zuhyo.construct import executor

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert executor._malloc_trim() is not None
    executor.release_freed_memory()  # callable any time, with or without glibc
    blocks = [bytes(200_000) for _ in range(200)]  # 40 MB of mid-sized buffers, freed below
    del blocks
    assert executor.map_items(len, [b"ab", b"c"] * 40) == [2, 1] * 40
