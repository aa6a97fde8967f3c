"""Shared fixtures: the suite's own chart data, paths to real third-party data, the fake OpenAI server, CLI runner.

Two layers of data:
- ``tests/fixtures/`` is owned by the suite and always present (see tests/fixtures/README.md for provenance), so
  the engine is tested in any clone: ``chartqa_dir`` is a ChartQA-layout benchmark of 14 charts rendered by
  tests/fixtures/chartqa/render.py and 61 QA rows, ``FIXTURE_CHARTS`` its PNG folder.
- ``../shared/data`` beside the project (real third-party files, see its SOURCES.md) is an extra layer for
  real-data tests; the ``shared_data`` fixture skips them, naming the missing folder, when it is absent.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE_CHARTQA = FIXTURES / "chartqa"
FIXTURE_CHARTS = FIXTURE_CHARTQA / "test" / "png"
SHARED_DATA = ROOT.parent / "shared" / "data"
SHARED_SKIP_REASON = f"real third-party test data not found at {SHARED_DATA} (an optional extra layer of tests)"


#: The test files that take longest (bench/README.md, "The README's test command"), sent to the xdist workers
#: first: with one file per unit of work (``--dist loadfile``), a long file taken last keeps one core busy while
#: the other idles. Only the order changes; a file missing from this list runs after them, in its usual place.
LONGEST_FILES = ("test_annotate_concurrency.py", "test_construct_export.py", "test_construct_pipeline_e2e.py",
                 "test_construct_chart_resnet.py", "test_construct_classifier.py", "test_annotate_browser.py",
                 "test_model_ocr.py", "test_construct_filter.py", "test_construct_executor.py",
                 "test_report_browser.py", "test_construct_collect_folder.py", "test_collect_fuzz.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: k for k, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's own order is kept


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (real third-party files); skips the test with the reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(SHARED_SKIP_REASON)
    return SHARED_DATA


@pytest.fixture(scope="session")
def chartqa_dir() -> Path:
    """The suite's own ChartQA-layout benchmark (test/test_human.json, test/test_augmented.json, test/png/)."""
    return FIXTURE_CHARTQA


@pytest.fixture(autouse=True, scope="session")
def cheap_password_hashes() -> Iterator[Callable[[], object] | None]:
    """argon2 at its lowest cost (1 pass over 8 KiB) for hashes made in the tests' own process.

    The production cost (argon2-cffi's defaults, about 0.2 s a hash on these cores, slow on purpose) would be paid
    at every account and every login of the suite; a hash records its own parameters, so verification is the same
    code either way. Its value is the production hasher's factory (None without the [web] extra), which
    ``test_passwords_are_hashed_at_argon2_cffi_defaults`` checks.
    """
    try:
        from zuhyo.annotate import users
    except ImportError:  # no [web] extra: nothing hashes passwords
        yield None
        return

    def cheap() -> object:
        from argon2 import PasswordHasher

        return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)

    production = users._hasher
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(users, "_hasher", cheap)
        yield production


@pytest.fixture
def fake_server() -> Iterator[Callable[..., object]]:
    """Factory: fake_server(answers={...}, fail_rate=..., ...) → a started FakeOpenAIServer (stopped after)."""
    from zuhyo.testing.fake_openai import FakeOpenAIServer, ServerState

    servers: list[FakeOpenAIServer] = []

    def start(port: int = 0, **kwargs: object) -> FakeOpenAIServer:
        server = FakeOpenAIServer(ServerState(**kwargs), port=port).start()  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


def run_cli_subprocess(*args: str, check: bool = True, timeout: float = 300, env: dict[str, str] | None = None
                       ) -> subprocess.CompletedProcess[str]:
    """Run `zuhyo ARGS` in a fresh Python process (the real console entry point): for tests of what only a process
    shows, such as startup imports, signals, or a run killed half way."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "zuhyo", *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(f"zuhyo {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


class _Captured(io.TextIOWrapper):
    """A text stream over bytes (``.buffer`` works, as on a real stdout) that is not a terminal."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="\n",
                         write_through=True)

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", errors="backslashreplace")  # type: ignore[attr-defined]


def run_cli(*args: str, check: bool = True, timeout: float = 300, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """Run `zuhyo ARGS` in this process through the console entry point (`zuhyo.cli:main`), as a subprocess would
    see it: argv, stdout and stderr apart, the exit status (an uncaught exception prints its traceback and gives 1).

    Starting a Python process per call cost 0.5-1.5 s at ~700 call sites; in-process, the imports are paid once per
    test worker. What a command changes in the process (environment, argv, working directory, logging, signal
    handlers) is put back afterwards. ``timeout`` is kept for the subprocess signature: pytest-timeout bounds a test.
    """
    import logging
    import signal
    import traceback

    from zuhyo.cli import main

    saved_env, saved_argv, saved_cwd = dict(os.environ), sys.argv, os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    root = logging.getLogger()
    saved_logging = list(root.handlers), root.level
    saved_signals = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    out, err = _Captured(), _Captured()
    code: int
    try:
        os.environ.update({"COLUMNS": "200", **(env or {})})
        sys.argv = ["zuhyo", *args]
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err
        try:
            main()
            code = 0
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                code = int(e.code or 0)
            else:  # sys.exit("message"): Python prints it and exits 1
                print(e.code, file=sys.stderr)
                code = 1
        except Exception:  # as the interpreter would: the traceback on stderr, exit status 1
            traceback.print_exc(file=sys.stderr)
            code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        root.handlers[:], root.level = saved_logging[0], saved_logging[1]
        for sig, handler in saved_signals.items():
            if signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)
    proc = subprocess.CompletedProcess(["zuhyo", *args], code, out.text(), err.text())
    if check and proc.returncode != 0:
        raise AssertionError(f"zuhyo {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def run_cli_json(*args: str, **kw: object) -> dict:
    proc = run_cli(*args, "--json", **kw)  # type: ignore[arg-type]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one JSON line on stdout, got {len(lines)}: {proc.stdout[:500]}"
    return json.loads(lines[0])
