"""Map a function over items on local processes or a Ray cluster (issue 10 item 4).

The construction stages that map over images (hashing, OCR features, classification, rasterising) call
:func:`map_items`. ``executor`` is ``local`` (a process pool sized to the CPUs, or in-process for a handful of
items), ``ray`` (the Ray cluster named by ``RAY_ADDRESS``, else a local Ray instance) or ``ray:ADDRESS``. Results
come back in the items' order; an exception raised by ``fn`` on one item comes back as an :class:`ItemError` in
that item's place, so one bad image does not stop the map. ``fn`` must be a picklable top-level function and
the items plain data (image bytes, not database rows): workers never see the workspace (docs/scaling.md).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from zuhyo.errors import ZuhyoError

#: Below this many items the local executor runs in-process: a pool costs more than it saves.
IN_PROCESS_BELOW = 8


class ExecutorError(ZuhyoError):
    """A bad ``--executor`` value, or Ray asked for but not installed / not reachable."""


@dataclass(frozen=True)
class ItemError:
    """The place-holder for an item whose function raised: the exception's type and message."""

    index: int
    error: str

    def __str__(self) -> str:
        return self.error


def parse_executor(spec: str) -> tuple[str, str | None]:
    """``local`` → ("local", None); ``ray`` → ("ray", None); ``ray:ADDRESS`` → ("ray", ADDRESS)."""
    s = spec.strip()
    if s == "local":
        return "local", None
    if s == "ray":
        return "ray", None
    if s.startswith("ray:") and s[4:].strip():
        return "ray", s[4:].strip()
    raise ExecutorError(f"unknown executor {spec!r} (use local, ray or ray:ADDRESS)")


def map_items(fn: Callable[[Any], Any], items: Iterable[Any], *, executor: str = "local",
              progress: Callable[[int, Any], None] | None = None, chunksize: int | None = None,
              in_flight: int | None = None, keep: Callable[[int, Any], Any] | None = None) -> list[Any]:
    """``[fn(x) for x in items]`` on the chosen executor, in order; a raising item gives an :class:`ItemError`.

    ``progress(index, result)`` is called in the driver as each item finishes (in completion order).
    ``chunksize`` items travel per task (default: about four tasks per worker, at most 64 items).

    With ``in_flight`` the items are taken from ``items`` (any iterable: a generator that reads each item's
    bytes when asked) only as tasks finish, at most ``in_flight`` tasks (of ``chunksize`` items, default 1)
    submitted and not yet done: one pool for the whole map, with the driver holding a bounded number of items -
    where a map per group of items would start a pool per group and wait for each group's slowest task.

    With ``keep`` the map returns ``keep(index, result)`` for each item instead of its result, called in the
    driver in index order as soon as the results of every earlier item are in: the driver holds whole results
    only until then (with ``in_flight``, about that many tasks' worth), e.g. features whose large parts
    ``keep`` writes to a file in order.
    """
    kind, address = parse_executor(executor)
    out = _Results(keep)
    if in_flight is not None:
        if in_flight < 1:
            raise ValueError(f"in_flight must be at least 1, not {in_flight}")
        return _map_streamed(fn, iter(items), kind, address, progress, chunksize or 1, in_flight, out)
    items = list(items)
    if not items:
        return []
    if kind == "ray":
        return _map_ray(fn, _chunks(items, _ray_workers(address), chunksize), progress, len(items), address, out)
    workers = os.cpu_count() or 1
    if workers == 1 or len(items) < IN_PROCESS_BELOW:
        return _map_in_process(fn, enumerate(items), progress, out)
    chunks = _chunks(items, workers, chunksize)
    try:
        return _map_local(fn, iter(chunks), min(workers, len(chunks)), progress, len(chunks), out)
    finally:
        release_freed_memory()


class _Results:
    """A map's results by index; with ``keep``, each result passed through it in index order as soon as every
    earlier one is in (those still waiting are the only whole results held)."""

    def __init__(self, keep: Callable[[int, Any], Any] | None) -> None:
        self.values: list[Any] = []
        self._keep = keep
        self._next = 0
        self._waiting: dict[int, Any] = {}

    def reserve(self, size: int) -> None:
        """Room for the results of the first ``size`` items."""
        if len(self.values) < size:
            self.values.extend([None] * (size - len(self.values)))

    @property
    def waiting(self) -> int:
        """Results held whole until an earlier one is in."""
        return len(self._waiting)

    def full(self, in_flight: int, chunk: int) -> bool:
        """Whether no more may be submitted: ``in_flight`` chunks' worth of results wait for an earlier one
        (the tasks in flight alone do not bound them: while the earliest runs, the later ones finish)."""
        return self.waiting >= in_flight * chunk

    def put(self, index: int, result: Any) -> None:
        self.reserve(index + 1)
        if self._keep is None:
            self.values[index] = result
            return
        self._waiting[index] = result
        while self._next in self._waiting:
            self.values[self._next] = self._keep(self._next, self._waiting.pop(self._next))
            self._next += 1


def _map_in_process(fn: Callable[[Any], Any], items: Iterable[tuple[int, Any]],
                    progress: Callable[[int, Any], None] | None, out: _Results) -> list[Any]:
    for i, x in items:
        r = _call(fn, i, x)
        if progress is not None:
            progress(i, r)
        out.put(i, r)
    return out.values


def _map_streamed(fn: Callable[[Any], Any], items: Iterator[Any], kind: str, address: str | None,
                  progress: Callable[[int, Any], None] | None, chunksize: int, in_flight: int,
                  out: _Results) -> list[Any]:
    """:func:`map_items` with ``in_flight``: chunks cut from ``items`` as they are needed."""
    import itertools

    first = list(itertools.islice(items, IN_PROCESS_BELOW))  # enough to tell a handful from a map
    if not first:
        return []
    rest = itertools.chain(first, items)
    if kind == "ray":
        return _map_ray(fn, _lazy_chunks(rest, chunksize), progress, in_flight, address, out)
    workers = os.cpu_count() or 1
    if workers == 1 or len(first) < IN_PROCESS_BELOW:  # the whole map is that handful
        return _map_in_process(fn, enumerate(rest), progress, out)
    try:
        return _map_local(fn, _lazy_chunks(rest, chunksize), workers, progress, in_flight, out)
    finally:
        release_freed_memory()


def _lazy_chunks(items: Iterator[Any], size: int) -> Iterator[tuple[int, list[Any]]]:
    import itertools

    start = 0
    while chunk := list(itertools.islice(items, size)):
        yield start, chunk
        start += len(chunk)


@functools.lru_cache(maxsize=4)
def _libc_function(name: str) -> Callable[..., int] | None:
    """The C library's function ``name`` (glibc's ``malloc_trim``, ``mallopt``), or ``None`` where it has none
    (macOS, musl)."""
    import ctypes
    import ctypes.util

    library = ctypes.util.find_library("c")
    try:
        found = getattr(ctypes.CDLL(library), name, None) if library else None
    except OSError:
        return None
    return found  # type: ignore[no-any-return]


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` where the C library has none (macOS, musl)."""
    return _libc_function("malloc_trim")


#: glibc's ``mallopt`` settings for the workers (malloc.h: M_TRIM_THRESHOLD -1, M_TOP_PAD -2, M_MMAP_THRESHOLD -3)
#: - buffers up to 32 MB from the heap, freed memory kept up to 64 MB, the heap grown 16 MB at a time.
WORKER_MALLOC = ((-3, 32 << 20), (-1, 64 << 20), (-2, 16 << 20))


@functools.cache
def _keep_freed_memory() -> None:
    """Runs once in each worker (local or Ray): glibc keeps the memory a task frees for the next one
    (:data:`WORKER_MALLOC`); nothing where the C library has no ``mallopt``.

    A worker fresh from the fork server starts with glibc's lowest thresholds: each image's and each pair's arrays
    (a few hundred KB to a few MB) were mapped and unmapped, or the heap grown and trimmed, at every call, and
    every page touched again was a page fault. A near-duplicate second look cost 27 ms in the driver (whose
    thresholds had long risen) and 34 ms in a worker; with these settings the worker's 800 second looks took
    2.4 million page faults fewer and 22 % less time, at the same peak memory (bench/README.md, "eighteenth
    session"). The driver is left as it is: it trims what it frees after each map
    (:func:`release_freed_memory`)."""
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        for parameter, value in WORKER_MALLOC:
            mallopt(parameter, value)


def release_freed_memory() -> None:
    """Give the memory the driver has freed back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    A map's items and results are many mid-sized buffers; freed, glibc keeps them in its heaps, so the driver's
    resident memory stays at the high-water mark of every map so far. Trimming after each map kept the
    near-duplicate filter's driver at 169 instead of 224 MiB for 1,500 images, in the same time
    (bench/README.md, "Scale")."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _call(fn: Callable[[Any], Any], index: int, item: Any) -> Any:
    try:
        return fn(item)
    except Exception as e:  # noqa: BLE001 - every per-item failure becomes a value, by design
        return ItemError(index, f"{type(e).__name__}: {e}")


#: Libraries the construction workers import lazily, loaded once into the fork server (an ImportError there is
#: ignored) so that each pool's workers start with them: ~0.4 s per worker per pool otherwise.
WORKER_PRELOAD = ("numpy", "PIL.Image", "cv2", "scipy.fft")


def _worker_context(fn: Callable[[Any], Any]) -> Any:
    """The multiprocessing context of local pools: ``forkserver`` where the platform has it (else ``spawn``).

    Not ``fork``: a worker forked from a driver whose OpenCV had started its thread pool (any multi-threaded
    OpenCV call before, e.g. RapidOCR's) deadlocks on its first OpenCV call (the copied pool's condition
    variables), and the driver may run such calls in-process. The fork server is a fresh process started on
    the first pool, with :data:`WORKER_PRELOAD` and ``fn``'s module imported; workers are forked from it."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*WORKER_PRELOAD, fn.__module__])  # takes effect when the server starts
    return context


def _one_thread_per_worker() -> None:
    """Runs once in each local worker: BLAS and OpenMP pools down to one thread, since the pool already puts one
    worker on each core (each worker would otherwise run as many BLAS threads as there are cores: the
    near-duplicate verification's matrix products ran no faster on two workers than in one process;
    bench/README.md). OpenCV too, where the fork server loaded it (:data:`WORKER_PRELOAD`): a task that asks for
    one thread around each call (the near-duplicate features, per image) then finds it so and sets nothing. In
    one process on a loaded machine setting it and back cost up to ~1 ms a call; in the pool's workers the
    hashing of 2,000 charts went from 5.6 / 5.5 s to 5.2 / 5.5 s, within the noise (bench/README.md,
    "nineteenth session")."""
    import sys

    opencv = sys.modules.get("cv2")
    if opencv is not None:
        opencv.setNumThreads(1)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(1)


def _run_chunk(fn: Callable[[Any], Any], start: int, chunk: list[Any]) -> list[Any]:
    """Runs in a worker: ``fn`` over one chunk, exceptions as :class:`ItemError` values."""
    _keep_freed_memory()
    return [_call(fn, start + j, x) for j, x in enumerate(chunk)]


def _chunks(items: list[Any], workers: int, chunksize: int | None) -> list[tuple[int, list[Any]]]:
    size = chunksize or max(1, min(64, -(-len(items) // (4 * workers))))
    return [(i, items[i:i + size]) for i in range(0, len(items), size)]


def _deliver(out: _Results, start: int, results: list[Any], progress: Callable[[int, Any], None] | None) -> None:
    for j, r in enumerate(results):
        if progress is not None:
            progress(start + j, r)
        out.put(start + j, r)


def _map_local(fn: Callable[[Any], Any], chunks: Iterator[tuple[int, list[Any]]], workers: int,
               progress: Callable[[int, Any], None] | None, in_flight: int, out: _Results) -> list[Any]:
    """The chunks on a pool of ``workers`` processes, at most ``in_flight`` submitted and not done."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    with ProcessPoolExecutor(max_workers=workers, mp_context=_worker_context(fn),
                             initializer=_one_thread_per_worker) as pool:
        pending: dict[Any, tuple[int, list[Any]]] = {}

        def submit() -> None:
            size = 1
            while len(pending) < in_flight and not out.full(in_flight, size):
                if (cut := next(chunks, None)) is None:
                    return
                start, chunk = cut
                pending[pool.submit(_run_chunk, fn, start, chunk)] = (start, chunk)
                out.reserve(start + len(chunk))
                size = len(chunk)

        submit()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                start, chunk = pending.pop(fut)
                try:
                    results = fut.result()
                except Exception as e:  # noqa: BLE001 - a dead worker fails its chunk's items, not the map
                    results = [ItemError(start + j, f"worker failed: {type(e).__name__}: {e}")
                               for j in range(len(chunk))]
                _deliver(out, start, results, progress)
            submit()
    return out.values


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError("--executor ray needs Ray: pip install 'zuhyo[ray]'") from None
    return ray


def _ray_workers(address: str | None) -> int:
    """The CPUs of the Ray cluster, joining the running Ray session if there is one, else ``ray.init(address)``
    (``None``: ``RAY_ADDRESS`` or a new local instance); the session is left up for the next stage."""
    ray = _import_ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except Exception as e:  # noqa: BLE001 - ConnectionError and Ray's own errors alike
            raise ExecutorError(f"cannot start or reach Ray at {address or 'local'}: {e}") from None
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _map_ray(fn: Callable[[Any], Any], chunks: Iterable[tuple[int, list[Any]]],
             progress: Callable[[int, Any], None] | None, in_flight: int, address: str | None, out: _Results
             ) -> list[Any]:
    """Ray tasks, one per chunk, at most ``in_flight`` submitted and not done (:func:`_ray_workers` joins or
    starts the session)."""
    _ray_workers(address)
    ray = _import_ray()
    remote = ray.remote(_run_chunk)
    fn_ref = ray.put(fn)
    refs: dict[Any, tuple[int, list[Any]]] = {}
    chunks = iter(chunks)

    def submit() -> None:
        size = 1
        while len(refs) < in_flight and not out.full(in_flight, size):
            if (cut := next(chunks, None)) is None:
                return
            start, chunk = cut
            refs[remote.remote(fn_ref, start, chunk)] = (start, chunk)
            out.reserve(start + len(chunk))
            size = len(chunk)

    submit()
    while refs:
        done, _ = ray.wait(list(refs), num_returns=1)
        for ref in done:
            start, chunk = refs.pop(ref)
            try:
                results = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - a lost worker or task fails its chunk's items, not the map
                cause = getattr(e, "cause", None) or e  # RayTaskError wraps the worker's exception
                msg = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
                results = [ItemError(start + j, f"worker failed: {type(cause).__name__}: {msg}")
                           for j in range(len(chunk))]
            _deliver(out, start, results, progress)
        submit()
    return out.values
