"""The Prefect server schedules need, found or started: the I/O shell of `serve` and `status`.

Prefect's ephemeral mode (no `PREFECT_API_URL`) starts a throwaway server per process
and cannot run schedules. So `serve` uses the server `PREFECT_API_URL` names, or starts
`prefect server start` itself, with its SQLite database under the data root's state
folder (`.incidentlib/prefect/`), and writes where it listens to `server.json` there, so
that the other commands of the same data root (`status`, `approve`, `crawl`, ...) find it
while it runs. The server's own log goes to `server.log` beside it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from pipeline.errors import SettingsError, StoreError
from pipeline.settings import Settings
from pipeline.store import Store, write_atomic

__all__ = ["LocalServer", "api_url_for", "healthy", "running_server"]

_STATE = "prefect"


@dataclass(frozen=True)
class LocalServer:
    api_url: str
    ui_url: str
    pid: int | None  # None: a server this process did not start (PREFECT_API_URL)


def _folder(store: Store) -> Path:
    return store.state_dir / _STATE


def healthy(api_url: str, timeout: float = 2.0) -> bool:
    """Whether a Prefect API answers its health check."""
    try:
        response = httpx.get(f"{api_url.rstrip('/')}/health", timeout=timeout, trust_env=False)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _recorded_state(store: Store) -> tuple[LocalServer, str] | None:
    """The server a `serve` of this data root recorded, and its state (starting, running); None when none is."""
    try:
        data = json.loads((_folder(store) / "server.json").read_text(encoding="utf-8"))
        return LocalServer(data["api_url"], data["ui_url"], int(data["pid"])), data.get("state", "")
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None


def recorded_server(store: Store) -> LocalServer | None:
    """The local server a `serve` of this data root started, if it still runs and answers."""
    recorded = _recorded_state(store)
    if recorded is None:
        return None
    server, state = recorded
    if state != "running" or server.pid is None or not _alive(server.pid) or not healthy(server.api_url):
        return None
    return server


def api_url_for(store: Store) -> str | None:
    """The Prefect API the commands of this data root use: PREFECT_API_URL, else a running `serve`'s."""
    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        return configured
    server = recorded_server(store)
    return server.api_url if server else None


def _prefect_command() -> list[str]:
    script = Path(sys.executable).with_name("prefect")
    return [str(script)] if script.exists() else [shutil.which("prefect") or "prefect"]


def _write_state(store: Store, server: LocalServer, state: str) -> None:
    data = {"api_url": server.api_url, "ui_url": server.ui_url, "pid": server.pid, "state": state}
    write_atomic(_folder(store) / "server.json", json.dumps(data).encode())


def _stop_leftover(store: Store) -> None:
    """A server a `serve` of this data root started and could not stop (it was killed): stopped now."""
    recorded = _recorded_state(store)
    if recorded is None:
        return
    pid = recorded[0].pid
    if pid is not None and _alive(pid):
        try:
            os.killpg(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    (_folder(store) / "server.json").unlink(missing_ok=True)


def _start(store: Store, settings: Settings) -> tuple[LocalServer, subprocess.Popen]:
    folder = _folder(store)
    folder.mkdir(parents=True, exist_ok=True)
    _stop_leftover(store)
    host, port = "127.0.0.1", settings.server_port
    api_url, ui_url = f"http://{host}:{port}/api", f"http://{host}:{port}"
    if healthy(api_url, timeout=0.5):
        raise SettingsError(
            f"{ui_url}: another Prefect server already listens there; set PREFECT_API_URL={api_url} "
            "to use it, or INCIDENTLIB_SERVER_PORT to start one elsewhere"
        )
    env = {
        **os.environ,
        "PREFECT_HOME": str(folder),
        "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{folder / 'prefect.db'}",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_API_URL": api_url,
        "DO_NOT_TRACK": "1",
    }
    env.pop("PREFECT_API_URL", None)
    with open(folder / "server.log", "ab") as log:
        process = subprocess.Popen(
            [*_prefect_command(), "server", "start", "--host", host, "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as a whole, not by a Ctrl-C meant for us
        )
    server = LocalServer(api_url, ui_url, process.pid)
    try:
        # Recorded before it answers: whoever finds it there after a crash can stop it.
        _write_state(store, server, "starting")
        deadline = time.monotonic() + settings.server_startup_timeout_s
        while not healthy(api_url, timeout=1.0):
            if process.poll() is not None:
                raise SettingsError(
                    f"the Prefect server stopped at start (exit {process.returncode}); see {folder / 'server.log'}"
                )
            if time.monotonic() > deadline:
                waited = settings.server_startup_timeout_s
                raise SettingsError(
                    f"the Prefect server did not answer within {waited:.0f} s; see {folder / 'server.log'}"
                )
            time.sleep(0.2)  # polling a child's health: there is nothing to wait on instead
        _write_state(store, server, "running")
    except BaseException:  # a Ctrl-C while it starts included: it must not outlive us
        _stop(process)
        (folder / "server.json").unlink(missing_ok=True)
        raise
    return server, process


def _stop(process: subprocess.Popen, grace_s: float = 20.0) -> None:
    """SIGTERM to the server's process group, SIGKILL if it is still there after `grace_s`."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def running_server(store: Store, settings: Settings) -> Iterator[LocalServer]:
    """The server to use while the block runs: PREFECT_API_URL's, or one started here and stopped after."""
    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        if not healthy(configured, timeout=10.0):
            raise SettingsError(f"PREFECT_API_URL={configured}: no Prefect server answers there")
        yield LocalServer(configured, configured.removesuffix("/api"), None)
        return
    with ExitStack() as held:
        # One `serve` per data root: a second would fight the first over the server's database.
        try:
            held.enter_context(store.lock("serve", timeout=0))
        except StoreError:
            raise SettingsError(f"{store.root}: another `incidentlib serve` of this data root is running") from None
        server, process = _start(store, settings)
        try:
            yield server
        finally:
            # A second Ctrl-C or SIGTERM must not cut the stop short and leave the server behind.
            previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                _stop(process)
                (_folder(store) / "server.json").unlink(missing_ok=True)
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
