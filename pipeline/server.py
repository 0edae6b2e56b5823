"""The Prefect server the flows report to, found or started: the I/O shell of the commands and `serve`.

Which server a command uses, in order:
1. the one `PREFECT_API_URL` names (an operator's own server, with PostgreSQL past one machine);
2. the one a running `incidentlib serve` of the same data root started (`server.json`);
3. one started for the command alone, API only, stopped when the command ends.

`serve` uses the first, or starts the whole server (UI, scheduler) on `INCIDENTLIB_SERVER_PORT`
and records where it listens in `server.json`. Every server started here keeps its SQLite
database and its log under the data root's state folder (`.incidentlib/prefect/`), and runs
as pipeline.server_process, which watches its parent: it never outlives the command or the
`serve` that started it, SIGKILL included. Prefect's own temporary server has no such guard,
so it is never let start (PREFECT_SERVER_EPHEMERAL_ENABLED=false).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from pipeline import interrupt
from pipeline.errors import LockBusy, SettingsError
from pipeline.prefect_env import QUIET, flush_to_server, prefect_environment
from pipeline.server_process import PARENT_ENV, SOCKET_ENV
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.store.files import process_alive

__all__ = ["LocalServer", "api_url_for", "command_server", "healthy", "prefect_home", "running_server"]

_STATE = "prefect"  # Prefect's home, in the data root's state
_RECORD = "server.json"  # in it: the server a `serve` started, while it runs
# Deployment concurrency leases kept on disk, so a slot held by a run of a killed `serve` is freed
# by the server itself once the lease expires (in memory, a restarted server forgets it for good).
_LEASES = "prefect.server.concurrency.lease_storage.filesystem"


@dataclass(frozen=True)
class LocalServer:
    api_url: str
    ui_url: str
    pid: int | None  # None: a server this process did not start (PREFECT_API_URL, or a `serve`'s)


def prefect_home(store: Store) -> Path:
    """Prefect's home for a data root's commands and servers (one database per library), unless
    the operator set PREFECT_HOME: under its state folder."""
    return _folder(store)


def _folder(store: Store) -> Path:
    return store.state.folder(_STATE, make=False)


def healthy(api_url: str, timeout: float = 2.0) -> bool:
    """Whether a Prefect API answers its health check."""
    try:
        response = httpx.get(f"{api_url.rstrip('/')}/health", timeout=timeout, trust_env=False)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def _recorded_state(store: Store) -> tuple[LocalServer, str] | None:
    """The server a `serve` of this data root recorded, and its state (starting, running); None when none is."""
    try:
        data = json.loads((_folder(store) / _RECORD).read_text(encoding="utf-8"))
        return LocalServer(data["api_url"], data["ui_url"], int(data["pid"])), data.get("state", "")
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None


def recorded_server(store: Store) -> LocalServer | None:
    """The server a `serve` of this data root started, if it still runs and answers."""
    recorded = _recorded_state(store)
    if recorded is None:
        return None
    server, state = recorded
    if state != "running" or server.pid is None or not process_alive(server.pid) or not healthy(server.api_url):
        return None
    return server


def api_url_for(store: Store) -> str | None:
    """The Prefect API the commands of this data root use: PREFECT_API_URL, else a running `serve`'s."""
    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        return configured
    server = recorded_server(store)
    return server.api_url if server else None


def _write_state(store: Store, server: LocalServer, state: str) -> None:
    data = {"api_url": server.api_url, "ui_url": server.ui_url, "pid": server.pid, "state": state}
    store.state.write(f"{_STATE}/{_RECORD}", json.dumps(data).encode())


def _stop_leftover(store: Store) -> None:
    """A server a `serve` of this data root recorded and could not stop: stopped now, if that pid
    is still such a server. A killed `serve` always leaves its record behind (its server stops
    by itself, within seconds, as it watches its parent), and by the next start, after a reboot
    say, the pid may be any process's: its group is signalled only when it is this data root's."""
    recorded = _recorded_state(store)
    if recorded is None:
        return
    pid = recorded[0].pid
    if pid is not None and _is_server_of(pid, _folder(store)):
        try:
            os.killpg(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    store.state.remove(f"{_STATE}/{_RECORD}")


def _is_server_of(pid: int, folder: Path) -> bool:
    """Whether `pid` runs pipeline.server_process with its home in `folder` (Linux's /proc);
    False when that cannot be told."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"pipeline.server_process" in command and f"PREFECT_HOME={folder}".encode() in environ


def _bind(port: int) -> socket.socket:
    """A listening loopback socket, handed down to the server: port 0 takes any free one, without a race."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise SettingsError(
            f"127.0.0.1:{port}: cannot listen there ({exc.strerror}); set INCIDENTLIB_SERVER_PORT to another port",
            name="INCIDENTLIB_SERVER_PORT",
        ) from None
    sock.listen(128)
    return sock


def _start(store: Store, settings: Settings, *, full: bool, port: int) -> tuple[LocalServer, subprocess.Popen[bytes]]:
    """Start pipeline.server_process and wait until it answers. Call from the main thread: the
    kernel's death signal follows the thread that started the child."""
    folder = _folder(store)
    folder.mkdir(parents=True, exist_ok=True)
    if full and healthy(f"http://127.0.0.1:{port}/api", timeout=0.5):
        raise SettingsError(
            f"http://127.0.0.1:{port}: another Prefect server already listens there; set PREFECT_API_URL to "
            "use it, or INCIDENTLIB_SERVER_PORT to start one elsewhere",
            name="INCIDENTLIB_SERVER_PORT",
        )
    sock = _bind(port)
    api_url = f"http://127.0.0.1:{sock.getsockname()[1]}/api"
    env = {name: value for name, value in os.environ.items() if name != "PREFECT_API_URL"}
    env |= QUIET | {
        PARENT_ENV: str(os.getpid()),
        SOCKET_ENV: str(sock.fileno()),
        "PREFECT_HOME": str(folder),
        "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{folder / 'prefect.db'}",
        "PREFECT_SERVER_CONCURRENCY_LEASE_STORAGE": _LEASES,
    }
    if full:
        env["PREFECT_UI_API_URL"] = api_url
    else:  # as Prefect's own temporary server: the API alone
        env |= {"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    log = folder / "server.log"
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "pipeline.server_process"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            pass_fds=[sock.fileno()],
            start_new_session=True,  # a Ctrl-C meant for the command is not the server's to hear
        )
    sock.close()  # the server holds it now
    server = LocalServer(api_url, api_url.removesuffix("/api"), process.pid)
    try:
        if full:  # recorded before it answers: whoever finds it there after a crash can stop it
            _write_state(store, server, "starting")
        deadline = time.monotonic() + settings.server_startup_timeout_s
        while not healthy(api_url, timeout=1.0):
            interrupt.check()
            if process.poll() is not None:
                raise SettingsError(f"the Prefect server stopped at start (exit {process.returncode}); see {log}")
            if time.monotonic() > deadline:
                waited = settings.server_startup_timeout_s
                raise SettingsError(f"the Prefect server did not answer within {waited:.0f} s; see {log}")
            time.sleep(0.2)  # polling a child's health: there is nothing to wait on instead
        if full:
            _write_state(store, server, "running")
    except BaseException:  # a signal while it starts included: it must not outlive us
        _stop(process, grace_s=2.0)  # it serves nothing yet, and it hears SIGTERM only once started
        if full:
            store.state.remove(f"{_STATE}/{_RECORD}")
        raise
    return server, process


def _stop(process: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM to the server, SIGKILL if it is still there after `grace_s`: a command stops within
    seconds of a signal, and the server has nothing left to finish (SQLite is safe to leave)."""
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
def _stopped_after(process: subprocess.Popen[bytes]) -> Iterator[None]:
    """The server stopped when the block ends, once it has been sent what Prefect still held for it
    (the runs' last logs and events). A second signal during that stop (up to 10 s) ends the
    process at once, as it does anywhere else: the server watches this process and stops by itself
    when it is gone."""
    try:
        yield
    finally:
        try:
            flush_to_server()
        finally:
            _stop(process)


@contextmanager
def running_server(store: Store, settings: Settings) -> Iterator[LocalServer]:
    """The server `serve` uses while the block runs: PREFECT_API_URL's, or the whole server started
    here on INCIDENTLIB_SERVER_PORT, recorded for the other commands and stopped after. The caller
    names the server to Prefect (pipeline.prefect_env) before it imports Prefect."""
    prefect_environment(home=prefect_home(store))
    with ExitStack() as held:
        # One `serve` per data root, whatever its server: a second would run every schedule twice,
        # and clear the first one's runs as leftovers.
        try:
            held.enter_context(store.state.lock("serve", timeout=0))
        except LockBusy:
            raise SettingsError(f"{store.root}: another `incidentlib serve` of this data root is running") from None
        configured = os.environ.get("PREFECT_API_URL")
        if configured:
            if not healthy(configured, timeout=10.0):
                raise SettingsError(
                    f"PREFECT_API_URL={configured}: no Prefect server answers there", name="PREFECT_API_URL"
                )
            yield LocalServer(configured, configured.removesuffix("/api"), None)
            return
        _stop_leftover(store)
        server, process = _start(store, settings, full=True, port=settings.server_port)
        held.callback(store.state.remove, f"{_STATE}/{_RECORD}")
        held.enter_context(_stopped_after(process))
        yield server


@contextmanager
def command_server(store: Store, settings: Settings) -> Iterator[str]:
    """The Prefect API a command's flow runs report to while the block runs, made the one Prefect
    talks to (PREFECT_API_URL): the configured one, a running `serve`'s, or one started for this
    command alone and stopped after. Enter it before Prefect is first imported (it refuses when
    Prefect already talks to another server: pipeline.prefect_env)."""
    known = api_url_for(store)
    if known:
        prefect_environment(api_url=known, home=prefect_home(store))
        yield known
        return
    server, process = _start(store, settings, full=False, port=0)
    try:
        with _stopped_after(process):
            prefect_environment(api_url=server.api_url, home=prefect_home(store))
            yield server.api_url
    finally:
        os.environ.pop("PREFECT_API_URL", None)
