"""`zuhyo users`: the annotation app's accounts (admin, annotator, expert) in a workspace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, emit_json, fail, require_modules, results

users_app = typer.Typer(help="Accounts of the annotation app (`zuhyo serve`): add, list, set roles, deactivate.",
                        no_args_is_help=True)

RoleOpt = Annotated[list[str], typer.Option("--role", help="admin, annotator or expert (repeatable).")]
WsArg = Annotated[Path, typer.Argument(help="Workspace folder (made by `zuhyo init`).")]
NameArg = Annotated[str, typer.Argument(help="The user's login name.")]
PasswordStdinOpt = Annotated[bool, typer.Option("--password-stdin", help="Read the password from the first line "
                                                                         "of standard input (else: prompted).")]


def _user_json(user: Any) -> dict[str, Any]:
    return {"id": user.id, "name": user.name, "display_name": user.display_name, "roles": list(user.roles),
            "locale": user.locale, "active": user.active}


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        line = sys.stdin.readline()
        if not line:
            fail("--password-stdin: nothing on standard input")
        return line.rstrip("\r\n")
    if not sys.stdin.isatty():
        fail("no terminal to ask for the password: pass it on standard input with --password-stdin")
    password: str = typer.prompt("password", hide_input=True, confirmation_prompt=True, err=True)
    return password


def _run(ws: Path, work: Any, json_out: bool) -> None:
    from zuhyo.annotate.workflow import WorkflowError
    from zuhyo.cli.workspace import open_workspace

    with open_workspace(ws) as w:
        try:
            user = work(w.db)
        except WorkflowError as e:
            fail(str(e))
    if json_out:
        emit_json(_user_json(user))
        return
    results(json_out).print(f"{user.name}: roles {', '.join(user.roles)}; "
                            f"{'active' if user.active else 'deactivated'}", highlight=False)


@users_app.command("add")
def add_cmd(
    ws: WsArg,
    name: NameArg,
    role: RoleOpt,
    display_name: Annotated[str | None, typer.Option("--display-name", help="Name shown in the app.")] = None,
    locale: Annotated[str, typer.Option("--locale", help="Language of the user's pages: ja or en.")] = "ja",
    password_stdin: PasswordStdinOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Add a user with one or more roles; the password is stored as an argon2 hash."""
    require_modules("user accounts (argon2 password hashes)", "argon2")
    from zuhyo.annotate.users import add_user

    password = _read_password(password_stdin)
    _run(ws, lambda db: add_user(db, name, password, role, locale=locale, display_name=display_name), json_out)


@users_app.command("list")
def list_cmd(ws: WsArg, json_out: JsonOpt = False) -> None:
    """List the users with their roles and whether they are active."""
    from zuhyo.annotate.users import list_users
    from zuhyo.cli.workspace import open_workspace

    with open_workspace(ws) as w:
        people = list_users(w.db)
    if json_out:
        emit_json({"users": [_user_json(u) for u in people]})
        return
    out = results(json_out)
    if not people:
        out.print("no users yet: add one with `zuhyo users add WS NAME --role admin`", highlight=False)
    for u in people:
        out.print(f"{u.id:>4}  {u.name:<20} {','.join(u.roles):<26} {'active' if u.active else 'deactivated'}",
                  highlight=False)


@users_app.command("set-roles")
def set_roles_cmd(ws: WsArg, name: NameArg, role: RoleOpt, json_out: JsonOpt = False) -> None:
    """Replace a user's roles."""
    from zuhyo.annotate.users import set_roles

    _run(ws, lambda db: set_roles(db, name, role), json_out)


@users_app.command("set-password")
def set_password_cmd(
    ws: WsArg,
    name: NameArg,
    password_stdin: PasswordStdinOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Set a new password for a user."""
    require_modules("user accounts (argon2 password hashes)", "argon2")
    from zuhyo.annotate.users import set_password

    password = _read_password(password_stdin)
    _run(ws, lambda db: set_password(db, name, password), json_out)


@users_app.command("deactivate")
def deactivate_cmd(ws: WsArg, name: NameArg, json_out: JsonOpt = False) -> None:
    """Deactivate a user: no more logins or work; everything they did is kept."""
    from zuhyo.annotate.users import deactivate

    _run(ws, lambda db: deactivate(db, name), json_out)


@users_app.command("activate")
def activate_cmd(ws: WsArg, name: NameArg, json_out: JsonOpt = False) -> None:
    """Re-activate a deactivated user."""
    from zuhyo.annotate.users import activate

    _run(ws, lambda db: activate(db, name), json_out)


def register(app: typer.Typer) -> None:
    app.add_typer(users_app, name="users")
