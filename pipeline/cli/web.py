"""`incidentlib web`: the reviewer's web page (pipeline.web) on the data root, served by uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.common import RootOption, app, load_settings


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
    typer.echo(f"review page: http://{host}:{port}/  (data root {settings.root}; Ctrl-C stops)")
    # A proxy in front (allowed from 127.0.0.1) tells the client's address and scheme, for the sign-in
    # throttle and the Secure cookie. Not when it names the person: then the page checks the proxy's
    # own address.
    proxied = not settings.web_user_header
    uvicorn.run(app_, host=host, port=port, log_level="warning", proxy_headers=proxied)
