"""`incidentlib mcp`: the published cases to agents and tools (pipeline.mcp_server over pipeline.lookup)."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from pipeline.cli.common import RootOption, app, echo, load_settings
from pipeline.errors import SettingsError
from pipeline.store import Store


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
    from pipeline.lookup import Lookup
    from pipeline.mcp_server import is_loopback, make_server, serve_http

    settings = load_settings(root)
    address = host or settings.mcp_host
    if http and not is_loopback(address) and not settings.mcp_allow_remote:
        raise SettingsError(
            f"mcp: {address} is not a loopback address and the server has no sign-in; "
            "set mcp_allow_remote (INCIDENTLIB_MCP_ALLOW_REMOTE=true) to listen there",
            name="mcp_host",
        )
    started = time.perf_counter()
    lookup = Lookup.open(Store.from_settings(settings), settings)
    server = make_server(lookup)
    took = time.perf_counter() - started
    if not http:
        # stdout is the protocol's: what a person reads goes to stderr
        echo(f"incidentlib mcp: {len(lookup)} cases indexed in {took:.2f} s; stdio", err=True)
        server.run("stdio")
        return

    def ready(url: str) -> None:
        echo(f"incidentlib mcp: {len(lookup)} cases indexed in {took:.2f} s; listening on {url}  (Ctrl-C stops)")

    serve_http(server, address, settings.mcp_port if port is None else port, ready)
