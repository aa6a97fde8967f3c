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
    assert "zuhyo demo" in first_screen
    assert "python -m pytest" in first_screen
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest -q" in ci


def test_readme_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)\)", readme):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to missing {target}"
