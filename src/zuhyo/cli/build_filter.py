"""`zuhyo filter ...`: drop unusable figures from a workspace, each drop with a reason a person can overturn.

Command shape (for the modules that add subcommands to this group)::

    zuhyo filter WS [options]          # runs the stage; the same as `zuhyo filter run WS [options]`
    zuhyo filter run WS [options]      # the stage: file checks, minimum resolution, near duplicates, chart check
    zuhyo filter train WS --labels ... # added by zuhyo.cli.build_filter_train

``filter_app`` is a typer group whose first argument, when it is not a subcommand name, is taken as the workspace
of ``run`` (see :class:`_DefaultRunGroup`). Another module adds a subcommand with a plain function and one line in
:func:`register` below, e.g. ``filter_app.command("train")(train_cmd)``; it must not name a subcommand like a
workspace folder one would pass to ``run``.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from zuhyo.cli.workspace import WsArg


class _DefaultRunGroup(TyperGroup):
    """A group whose default subcommand is ``run``: ``zuhyo filter WS`` == ``zuhyo filter run WS``."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


filter_app = typer.Typer(cls=_DefaultRunGroup, no_args_is_help=True,
                         help="Filter a workspace's figures: `zuhyo filter WS` runs the stage (= `filter run WS`).")


@filter_app.command("run")
def run_cmd(ws: WsArg) -> None:
    """Run the filter stage (placeholder while the stage is built)."""
    raise typer.Exit(0)


def register(app: typer.Typer) -> None:
    # Subcommands from other modules register here, e.g.:
    #   from zuhyo.cli.build_filter_train import train_cmd
    #   filter_app.command("train")(train_cmd)
    from zuhyo.cli.build_filter_train import train_cmd

    filter_app.command("train")(train_cmd)
    app.add_typer(filter_app, name="filter")
