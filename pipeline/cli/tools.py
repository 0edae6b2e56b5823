"""`incidentlib mcp`: the published cases to agents and tools (pipeline.mcp_server over pipeline.lookup)."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.common import RootOption, app, echo, load_settings
from pipeline.errors import SettingsError


@app.command()
def mcp(
    http: Annotated[
        bool,
        typer.Option(
            "--http", help="Serve streamable HTTP (for several clients) instead of stdio.", show_default="off"
        ),
    ] = False,
    host: Annotated[
        str | None,
        typer.Option(
            help="Address --http listens on (default: the mcp_host setting, 127.0.0.1). Loopback only "
            "unless the mcp_allow_remote setting is set: the server has no sign-in."
        ),
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="Port --http listens on (default: the mcp_port setting; 0: a free one).")
    ] = None,
    root: RootOption = None,
) -> None:
    """Answer agents by the Model Context Protocol: search the published cases, read one, find similar ones,
    list the vocabulary. Read-only; over stdio (for an agent's configuration) or, with --http, streamable HTTP."""
    from pipeline.mcp_server import refusal, serve

    settings = load_settings(root)
    refused = refusal(settings, http=http, host=host)
    if refused:
        raise SettingsError(refused, name="mcp_host")
    serve(settings, http=http, host=host, port=port, say=lambda line, err: echo(line, err=err))
