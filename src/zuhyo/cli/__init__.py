"""The `zuhyo` command line: parses input, calls the library, presents output."""

from __future__ import annotations

import importlib

import typer

from zuhyo.errors import ZuhyoError

app = typer.Typer(
    rich_markup_mode=None,  # plain click help: wraps at any width, never truncates ("…"), no <bool> on flags
    name="zuhyo",
    help="zuhyo (図表): build and evaluate chart & table VQA benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module adds its commands to `app`; all are light to import (heavy work is imported inside commands).
_COMMAND_MODULES = ("listing", "bench", "images", "evaluation", "reporting", "judging", "analysis", "demo",
                    "workspace", "build_collect", "build_filter", "build_sample",
                    "build_label")
for _mod in _COMMAND_MODULES:
    importlib.import_module(f"zuhyo.cli.{_mod}").register(app)


def main() -> None:
    """Console-script entry point: user-facing errors print without a traceback."""
    from zuhyo.cli._common import console

    try:
        app()
    except ZuhyoError as e:
        from rich.markup import escape

        console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)  # one line
        raise SystemExit(1) from None
