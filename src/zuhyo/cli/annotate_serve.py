"""`zuhyo serve`: the annotation web app over a workspace (authoring, blind verification, expert review, error
analysis, dashboard)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from zuhyo.cli._common import console, fail, require_modules
from zuhyo.cli.workspace import WsArg, open_workspace


def serve_cmd(
    ws: WsArg,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (0.0.0.0 for a team's LAN; put HTTPS "
                                                     "in front and pass --secure-cookies).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    runs: Annotated[Path | None, typer.Option("--runs", help="Run set folder (`zuhyo eval --out`) whose wrong "
                                                             "answers are loaded for error analysis.")] = None,
    runs_model: Annotated[str | None, typer.Option("--runs-model", help="The model of --runs whose wrong answers "
                                                                        "are sampled.")] = None,
    runs_sample: Annotated[int, typer.Option("--runs-sample", help="How many wrong answers to sample from "
                                                                   "--runs.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the --runs sample.")] = 0,
    judge: Annotated[str, typer.Option("--judge", help="Judge matching an author's and a verifier's answers: rules "
                                                       "or cascade:<model spec>.")] = "rules",
    secure_cookies: Annotated[bool, typer.Option("--secure-cookies", help="Mark the session cookie Secure (when "
                                                                          "served over HTTPS).")] = False,
    forwarded_allow_ips: Annotated[str | None, typer.Option(
        "--forwarded-allow-ips", help="Comma-separated addresses of reverse proxies whose X-Forwarded-For is "
                                      "trusted for the client address (login limits, the session log). Without it "
                                      "the address is the socket's peer and the header is ignored.")] = None,
) -> None:
    """Serve the annotation web app on a workspace until interrupted (Ctrl+C); GET /healthz answers {"ok": true}.

    Add people first with `zuhyo users add`. The session secret is made in the workspace on the first serve.
    """
    require_modules("the annotation app", "fastapi", "uvicorn", "argon2", "multipart", "itsdangerous")
    if runs is not None and runs_model is None:
        fail("--runs needs --runs-model: the model whose wrong answers are analysed")
    workspace = open_workspace(ws)
    import uvicorn

    from zuhyo.annotate.app import create_app
    from zuhyo.annotate.web_context import AppSettings

    if runs is not None and runs_model is not None:
        from zuhyo.annotate.errors_analysis import import_error_samples

        loaded = import_error_samples(workspace.db, runs, runs_model, runs_sample, seed, images=workspace.images)
        console.print(f"error analysis: {loaded['imported']} new of {loaded['wrong']} wrong answers of "
                      f"{runs_model} in {runs} ({loaded['existing']} already loaded)", highlight=False)
        for key, why in loaded["image_errors"].items():
            console.print(f"[yellow]image of {key} not copied[/]: {why}", highlight=False)
    app = create_app(workspace, AppSettings(runs_dir=runs, judge=judge, secure_cookies=secure_cookies))
    console.print(f"zuhyo annotate on http://{host}:{port}/ (workspace {ws}, {workspace.db.backend})",
                  highlight=False)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", **proxy_settings(forwarded_allow_ips))
    finally:
        workspace.close()


def proxy_settings(forwarded_allow_ips: str | None) -> dict[str, Any]:
    """uvicorn's proxy options: trust ``X-Forwarded-For`` only from the named proxies. uvicorn's own default
    trusts it from 127.0.0.1, so anyone on the server's machine (or a proxy forwarding a client's header
    unchanged) could pose as any address and never meet the per-address login limit."""
    ips = [ip.strip() for ip in (forwarded_allow_ips or "").split(",") if ip.strip()]
    if not ips:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": ips}


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_cmd)
