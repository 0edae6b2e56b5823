"""What the local stand-ins share: an HTTP server on loopback that a hanging-up client does not trouble."""

from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer
from typing import Any

__all__ = ["QuietServer"]


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # socketserver's signature
        # A client hanging up (a crawler done, one that cut a body off, a process killed) is not an error here.
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)
