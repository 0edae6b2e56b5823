"""The `incidentlib` command's entry point: it takes SIGTERM and Ctrl-C first, then loads the rest.

Loading the command line (typer, rich, the settings, httpx) takes about half a second,
several under load; a signal in that time took the default action (exit -15, no word).
Taken here, right after the interpreter and the `pipeline` package, a signal at any
later moment stops the command as it stops any other: one line, exit 130 or 143. This
is the one place the handlers are put in place for the command line (pipeline.interrupt).

`incidentlib mcp` with a plain line of its own options starts its server here without loading the
other commands' modules (pipeline.mcp_server.quick_start: an agent starts it often, and waits for it);
any other line of it goes through the command line.
"""

from __future__ import annotations

import sys

from pipeline import interrupt


def main() -> None:
    interrupt.install()
    try:
        if sys.argv[1:2] == ["mcp"]:  # an agent's server starts without the other commands' modules
            from pipeline.mcp_server import quick_start

            if quick_start(sys.argv[2:]):
                return
        from pipeline.cli import app

        app()
    except interrupt.Interrupted as exc:  # before a command runs: while loading, or parsing the line
        print(exc.summary, file=sys.stderr)
        raise SystemExit(exc.exit_status) from None
