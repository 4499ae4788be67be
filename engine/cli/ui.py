"""``engine ui``: the read-only web view of the runs and campaigns, live (engine/ui/)."""

from __future__ import annotations

import os

import typer
from rich.console import Console
from rich.markup import escape

err = Console(stderr=True)


def ui_cmd(db: str | None = typer.Option(None, "--db", help="Event database: a file or a postgresql:// URL "
                                         "(default $ENGINE_DB or ./engine-runs/engine.db)."),
           host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default; "
                                    "any other address needs --token)."),
           port: int = typer.Option(8642, "--port", min=0, max=65535,
                                    help="Port (0: any free port; the URL printed names it)."),
           token: str | None = typer.Option(None, "--token", help="Required off loopback: the secret every "
                                            "browser must present (default $ENGINE_UI_TOKEN).")) -> None:
    """Watch runs and campaigns live in the browser, read-only, from the event log itself."""
    from engine.ui.security import BindRefused
    from engine.ui.server import serve

    token = token or os.environ.get("ENGINE_UI_TOKEN") or None
    try:
        serve(db, host=host, port=port, token=token,
              announce=lambda url: err.print(f"engine ui: serving {escape(url)} (read-only; Ctrl-C stops)",
                                             highlight=False, soft_wrap=True),
              note=lambda text: err.print(f"engine ui: {escape(text)}", highlight=False, soft_wrap=True))
    except (BindRefused, OSError) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    app.command("ui")(ui_cmd)
