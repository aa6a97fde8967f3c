"""Render the CLI reference (docs/cli.md) from the real command objects.

``python -m zuhyo.cli.reference > docs/cli.md`` regenerates it; a test fails when the file and the commands
drift apart, and checks every documented option appears in the command's real ``--help``.
"""

from __future__ import annotations

import click
import typer


def _is_group(cmd: object) -> bool:
    # typer's groups are not always click.Group subclasses; they all have `commands`.
    return isinstance(getattr(cmd, "commands", None), dict)


def _walk(cmd: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    out = [(path, cmd)]
    if _is_group(cmd):
        for name in sorted(cmd.commands):
            out += _walk(cmd.commands[name], [*path, name])
    return out


def _param_row(p: click.Parameter) -> str:
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


def command_paths(app: typer.Typer) -> list[tuple[list[str], click.Command]]:
    return _walk(typer.main.get_command(app), ["zuhyo"])


def render_cli_reference(app: typer.Typer) -> str:
    lines = ["# CLI reference", "",
             "Generated from the commands themselves (`python -m zuhyo.cli.reference > docs/cli.md`); a test keeps",
             "it in step with `--help`. Every command that does work accepts `--json` and then prints one JSON",
             "object on stdout; progress and tables go to stderr.", ""]
    for path, cmd in command_paths(app):
        if cmd.hidden:
            continue
        title = " ".join(path)
        lines += [f"## `{title}`", ""]
        doc = (cmd.help or "").strip()
        if doc:
            lines += [doc.split("\n\n")[0].replace("\n", " "), ""]
        params = [p for p in cmd.params if p.name != "help" and not getattr(p, "hidden", False)]
        if _is_group(cmd):
            subs = ", ".join(f"`{n}`" for n in sorted(cmd.commands))
            lines += [f"Subcommands: {subs}", ""]
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
