"""Render the CLI reference (docs/cli.md) from the real command objects.

``python -m zuhyo.cli.reference > docs/cli.md`` regenerates it; a test fails when the file and the commands
drift apart, and checks every documented option appears in the command's real ``--help``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    # Recent typer vendors its own click (typer._click) and get_command returns those classes; the separate click
    # package is no longer a typer dependency, so the types are only named for the checker, never imported.
    from typer._click import Command, Parameter


def _subcommands(cmd: Command) -> dict[str, Command] | None:
    """A group's subcommands by name; None for a leaf command."""
    # typer's groups are not always click Group subclasses (TyperGroup derives from Command); they all have
    # `commands`.
    commands = getattr(cmd, "commands", None)
    return commands if isinstance(commands, dict) else None


def _walk(cmd: Command, path: list[str]) -> list[tuple[list[str], Command]]:
    out = [(path, cmd)]
    subs = _subcommands(cmd)
    if subs is not None:
        for name in sorted(subs):
            out += _walk(subs[name], [*path, name])
    return out


def _param_row(p: Parameter) -> str:
    if p.param_type_name == "argument":
        name = f"`{(p.name or '').upper()}`"
        kind = "argument" + (" (required)" if p.required else "")
    else:
        name = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
        kind = "flag" if getattr(p, "is_flag", False) else "value"
        if p.multiple:
            kind += ", repeatable"
        if p.required:
            kind += " (required)"
    default = getattr(p, "default", None)
    empty_seq = isinstance(default, list | tuple) and not default
    hide = default is None or default is False or callable(default) or empty_seq
    show_default = "" if hide else f"`{default}`"
    helptext = (getattr(p, "help", None) or "").replace("|", "\\|").replace("\n", " ")
    return f"| {name} | {kind} | {show_default} | {helptext} |"


def command_paths(app: typer.Typer) -> list[tuple[list[str], Command]]:
    return _walk(typer.main.get_command(app), ["zuhyo"])


def render_cli_reference(app: typer.Typer) -> str:
    lines = ["# CLI reference", "",
             "Generated from the commands themselves (`python -m zuhyo.cli.reference > docs/cli.md`); a test keeps",
             "it in step with `--help`. Every command that does work accepts `--json` and then prints one JSON",
             "object on stdout; without it, results print on stdout and progress, warnings and errors on stderr.",
             ""]
    for path, cmd in command_paths(app):
        if cmd.hidden:
            continue
        title = " ".join(path)
        lines += [f"## `{title}`", ""]
        doc = (cmd.help or "").strip()
        if doc:
            lines += [doc.split("\n\n")[0].replace("\n", " "), ""]
        params = [p for p in cmd.params if p.name != "help" and not getattr(p, "hidden", False)]
        subs = _subcommands(cmd)
        if subs is not None:
            lines += [f"Subcommands: {', '.join(f'`{n}`' for n in sorted(subs))}", ""]
        if params:
            lines += ["| parameter | kind | default | help |", "|---|---|---|---|"]
            lines += [_param_row(p) for p in params]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    from zuhyo.cli import app

    print(render_cli_reference(app), end="")


if __name__ == "__main__":
    main()
