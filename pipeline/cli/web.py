"""`incidentlib web`: the reviewer's web page (pipeline.web) on the data root, served by uvicorn."""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from pipeline.cli.common import RootOption, app, echo, load_settings
from pipeline.reviewers import list_reviewers
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.web.security import forwarded_from


def say_how_to_sign_in(settings: Settings) -> None:
    """With no reviewer account (and no proxy naming the person), say that nobody can sign in, and how
    to add an account; a page nobody can sign in to looked broken."""
    if settings.web_user_header or list_reviewers(Store.from_settings(settings)):
        return
    echo(
        "no reviewer account yet, so nobody can sign in: add one with "
        f"`incidentlib reviewer add NAME --root {shlex.quote(str(settings.root))}` (it asks for a password)",
        err=True,
    )


@app.command()
def web(
    host: Annotated[str, typer.Option(help="Address to listen on; behind a proxy keep 127.0.0.1.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    root: RootOption = None,
) -> None:
    """Serve the reviewer's web page: the queue, each draft beside its text, the review's moves, the cases."""
    import uvicorn

    from pipeline.web import create_app

    settings = load_settings(root)
    app_ = create_app(settings)
    echo(f"review page: http://{host}:{port}/  (data root {settings.root}; Ctrl-C stops)")
    say_how_to_sign_in(settings)
    proxy_headers, allowed = forwarded_from(settings)
    uvicorn.run(
        app_, host=host, port=port, log_level="warning", proxy_headers=proxy_headers, forwarded_allow_ips=allowed
    )
