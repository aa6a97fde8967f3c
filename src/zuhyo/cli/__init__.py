"""The `zuhyo` command line: parses input, calls the library, presents output."""

from __future__ import annotations

import importlib
import inspect

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
                    "workspace", "construct_collect", "construct_filter", "construct_sample",
                    "construct_label", "construct_export", "construct_abstracts", "construct_audit", "construct_draft",
                    "annotate_users", "annotate_errors", "agreement", "annotate_serve")
for _mod in _COMMAND_MODULES:
    importlib.import_module(f"zuhyo.cli.{_mod}").register(app)


def _first_sentence(text: str | None) -> str | None:
    """The help's first sentence, whole: click would otherwise cut the command list's summaries at ~45 characters."""
    if not text:
        return None
    para = " ".join(inspect.cleandoc(text).split("\n\n")[0].split())
    end = para.find(". ")
    return para if end < 0 else para[: end + 1]


def _set_short_helps(typer_app: typer.Typer) -> None:
    """Give every command and group, at every level, its first sentence as the command list's summary."""
    from typer.models import DefaultPlaceholder

    def unset(value: object) -> bool:
        return value is None or isinstance(value, DefaultPlaceholder)

    for info in typer_app.registered_commands:
        if unset(info.short_help):
            info.short_help = _first_sentence(None if unset(info.help) else info.help) or _first_sentence(
                inspect.getdoc(info.callback))
    for group in typer_app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        if unset(group.short_help):
            help_text = group.help if not unset(group.help) else sub.info.help
            group.short_help = _first_sentence(None if unset(help_text) else str(help_text))
        _set_short_helps(sub)


_set_short_helps(app)


def main() -> None:
    """Console-script entry point: user-facing errors print without a traceback."""
    from rich.markup import escape

    from zuhyo.cli._common import console

    try:
        app()
    except ModuleNotFoundError as e:  # an optional dependency a command imports: say which extra installs it
        from zuhyo.cli._common import install_hint

        hint = install_hint(e.name or "")
        if hint is None:
            raise
        console.print(f"[bold red]error:[/] {escape(hint)}", highlight=False, soft_wrap=True)
        raise SystemExit(1) from None
    except ZuhyoError as e:
        console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)  # one line
        raise SystemExit(1) from None
