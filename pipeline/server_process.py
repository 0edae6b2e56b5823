"""The Prefect server process incidentlib starts: it never outlives the process that started it.

Run as `python -m pipeline.server_process` by pipeline.server, never by hand. Before
Prefect is imported it

1. asks the kernel for SIGTERM when its parent dies (pipeline.lifeline) (Linux's PR_SET_PDEATHSIG), SIGKILL of
   the parent included, and exits at once if the parent died before that was armed;
2. starts a thread that watches its parent's pid every half second (PDEATHSIG follows the
   thread that started it, and is Linux's alone) and stops the server when the parent is
   gone: gracefully, or after three seconds at once (uvicorn acts on SIGTERM only once it
   has started up, which can take longer; SQLite is safe to leave mid-transaction);
3. serves Prefect's application with uvicorn on the socket its parent bound and handed down
   (so the port was free and stays taken): the whole server as `prefect server start` runs
   it (UI, scheduler, every service, for `serve`), or the API alone as Prefect's own
   temporary server runs it (for one command), as the environment its parent set says.

Prefect starts its temporary server with neither guard, so a command killed at the wrong
moment left one behind (about 200 MB each).
"""

from __future__ import annotations

import os
import socket

from pipeline.lifeline import watch_parent

PARENT_ENV = "INCIDENTLIB_SERVER_PARENT"
SOCKET_ENV = "INCIDENTLIB_SERVER_FD"


def main() -> None:
    watch_parent(int(os.environ.pop(PARENT_ENV)), kernel=True)  # from the main thread of `serve` or a command
    import uvicorn

    sock = socket.socket(fileno=int(os.environ.pop(SOCKET_ENV)))
    config = uvicorn.Config(
        "prefect.server.api.server:create_app",
        factory=True,
        lifespan="on",
        log_level="error",
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
