"""Docs are part of done: the CLI reference matches the commands, README's first screen, linked pages exist."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT, run_cli

from zuhyo.cli import app
from zuhyo.cli.reference import command_paths, render_cli_reference


def test_cli_reference_is_current():
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == render_cli_reference(app), "docs/cli.md is stale: python -m zuhyo.cli.reference > docs/cli.md"


@pytest.mark.parametrize("path", [p for p, _ in command_paths(app)][1:], ids=lambda p: " ".join(p[1:]))
def test_documented_options_appear_in_real_help(path):
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = doc.split(f"## `{' '.join(path)}`\n", 1)[1].split("\n## ", 1)[0]
    options = re.findall(r"`(--[a-z0-9-]+)`", section)
    help_text = run_cli(*path[1:], "--help").stdout
    for opt in options:
        assert opt in help_text, f"{' '.join(path)} --help does not show {opt}"


def test_readme_first_screen_has_the_two_setup_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = "\n".join(readme.splitlines()[:30])
    block = re.search(r"```bash\n(.*?)```", first_screen, re.S)
    assert block, "the README's first screen has no ```bash block"
    commands = [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(commands) == 2, commands
    assert commands[0].endswith("zuhyo demo") and commands[1].endswith("python -m pytest -q"), commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\npython -m pytest -q\n" in ci


def test_ci_also_runs_the_suite_from_a_clone_without_shared():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    clone = ci.index("git clone")
    assert "python -m pytest" in ci[clone:] and "test ! -e ../shared" in ci[clone:]


USER_DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_docs_do_not_point_outside_the_repo(doc):
    """A user's clone has no ../shared (the developers' data folder): docs use files of the repo or say where to
    get them."""
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        for needle in ("../shared", "/work/shared", "shared/data", "shared/DESIGN"):
            assert needle not in line, f"{doc.relative_to(ROOT)}:{n} mentions {needle}: {line.strip()}"


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_in_docs_resolve(doc):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
        if not target.startswith(("http://", "https://", "mailto:")):
            assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)} links to missing {target}"


def test_architecture_page_is_linked_and_names_real_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/architecture.md)" in readme
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    src = ROOT / "src" / "zuhyo"
    for path in re.findall(r"`([a-z_]+(?:/[a-z_]+)*(?:\.py|/))`", page):
        assert any((base / path).exists() for base in (src, ROOT / "src", ROOT)), f"architecture.md: no {path}"
    for name, module in re.findall(r"`(_[A-Z]+_MODULES)` of `([a-z_/]+\.py)`", page):
        assert name in (src / module).read_text(encoding="utf-8"), f"{name} is not in {module}"


def test_readme_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)\)", readme):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to missing {target}"
