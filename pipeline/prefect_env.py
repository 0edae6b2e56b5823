"""What Prefect is told through its environment, set in one place, before Prefect is first imported.

Prefect reads its settings once, when first imported (prefect.context builds them then): a
variable set afterwards is not seen. A `PREFECT_API_URL` set too late sends the flow runs to
whichever server Prefect had in mind, without a word. So every command that uses Prefect
calls `prefect_environment` first, and only then imports pipeline.flows, pipeline.deployments
or pipeline.artifacts (the only modules that import Prefect; the command line itself does
not). It refuses, loudly, when Prefect was already imported and talks to another server.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["QUIET", "flush_to_server", "prefect_api_url", "prefect_environment"]

# What the server and the client must be told before Prefect is first imported: no telemetry and
# no analytics (offline they print errors, and the telemetry service raced start-up writes into a
# "database is locked" traceback), and never a temporary server of Prefect's own (it has no guard).
QUIET = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "PREFECT_SERVER_EPHEMERAL_ENABLED": "false"}


def prefect_api_url() -> tuple[bool, str | None]:
    """Whether Prefect has read its settings yet (it has once imported), and the API URL it uses then."""
    if "prefect.context" not in sys.modules:
        return False, None
    from prefect.settings import get_current_settings

    return True, get_current_settings().api.url


def prefect_environment(
    *, api_url: str | None = None, home: Path | None = None, logging_level: str | None = None
) -> None:
    """Set every variable Prefect reads when first imported; call it before.

    Always: quiet offline, and no unguarded temporary server (`QUIET`, unless the operator set
    them). `home`: Prefect's folder (its database, its profiles), unless PREFECT_HOME is set.
    `logging_level`: its log level. `api_url`: the server its flow runs report to.

    Raises RuntimeError, naming both servers, when Prefect was imported already and talks to
    another API than `api_url` (a bug: an import of pipeline.flows or Prefect came first).
    """
    if api_url is not None:
        imported, current = prefect_api_url()
        if imported and (current or "").rstrip("/") != api_url.rstrip("/"):
            raise RuntimeError(
                f"Prefect was imported before its environment was set: it reports to {current or 'no server'}, "
                f"not to {api_url}; import pipeline.flows, pipeline.deployments or prefect only after "
                "pipeline.prefect_env.prefect_environment"
            )
        os.environ["PREFECT_API_URL"] = api_url
    for name, value in QUIET.items():
        os.environ.setdefault(name, value)
    if logging_level is not None:
        os.environ["PREFECT_LOGGING_LEVEL"] = logging_level
    if home is not None and "PREFECT_HOME" not in os.environ:
        os.environ["PREFECT_HOME"] = str(home)
        try:  # Prefect makes only the last folder, and warns on stderr when it cannot
            home.mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # a read-only data root: Prefect says so itself


def flush_to_server(timeout_s: float = 5.0) -> None:
    """Send what Prefect still holds for its server now, while it listens: the flow runs' last logs
    and events, which its background workers send in batches. Left to the interpreter's exit, they
    meet a server the command has stopped and end the command with `--- Error logging to API ---
    All connection attempts failed`, which nobody can act on. Nothing to do before Prefect is imported;
    `timeout_s` bounds the wait for a server that no longer answers."""
    if "prefect.logging.handlers" not in sys.modules:
        return
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=timeout_s)
    EventsWorker.drain_all(timeout=timeout_s)
