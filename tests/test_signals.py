"""Signals, as an operator and a service manager send them: the commands stop within seconds,
lose nothing, and leave no process behind. Every command here is a process of its own."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import psutil
import pytest
from documents import POSTMORTEM_MD
from helpers import ArchiveRoot, archive_settings, complete_draft, seed_prefect_db, settings_env

from pipeline.draft import new_draft
from pipeline.errors import LockBusy
from pipeline.models import Draft, DraftState, SourceEntry
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.store import Store
from pipeline.validate import validate

pytestmark = pytest.mark.runs_long(80)  # seconds in all: such modules start first (conftest.py)

BIN = Path(sys.executable).parent
T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], what: str, timeout: float = 60.0) -> T:
    """Poll `condition` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def processes_of(home: Path) -> list[psutil.Process]:
    """Every process whose Prefect home is `home`: the command's own server, a flow run, ..."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("PREFECT_HOME") == str(home):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


@pytest.fixture
def slow_site(farm: SiteFarm) -> Site:
    """Pages that hold a crawler: every one stalls half-way through its body."""
    site = farm.add_site("slow")
    for n in range(6):
        site.pages[f"/pm{n}.md"] = Page.markdown(POSTMORTEM_MD * 40, behavior="stall")
    site.pages["/ok.md"] = Page.markdown(POSTMORTEM_MD)
    return site


@pytest.fixture
def command(root: Path, slow_site: Site, migrated_prefect_db: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start `incidentlib ARGS` on the data root, as an operator's shell does; kill what remains after.
    The server a command starts finds its database made already (helpers.seed_prefect_db)."""
    seed_prefect_db(root, migrated_prefect_db)
    (root / "sources" / "slow.yaml").write_text(
        "".join(f"- url: {slow_site.url(path)}\n" for path in sorted(slow_site.pages)), encoding="utf-8"
    )
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PREFECT_", "INCIDENTLIB_"))}
    env |= {"INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "1", "INCIDENTLIB_PER_HOST_DELAY_S": "0"}
    started: list[subprocess.Popen[str]] = []

    def start(*args: str, api_url: str | None = None, settings: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """`api_url`: report to that Prefect server (the session's) instead of starting one (7 s);
        `settings`: more INCIDENTLIB_* variables."""
        process = subprocess.Popen(
            [str(BIN / "incidentlib"), *args, "--root", str(root)],
            env=env | ({"PREFECT_API_URL": api_url} if api_url else {}) | (settings or {}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()
    for leftover in processes_of(root / ".incidentlib" / "prefect"):
        leftover.kill()


def cpu_seconds(process: subprocess.Popen[str]) -> float:
    times = psutil.Process(process.pid).cpu_times()
    return times.user + times.system


def stop_and_time(process: subprocess.Popen[str], *signals: signal.Signals) -> tuple[float, str]:
    started = time.monotonic()
    for signum in signals:
        process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    return time.monotonic() - started, err


def crawl_state(root: Path) -> str | None:
    """How the last crawl ended, by the data root's runs file and by the Prefect server's own record."""
    kept = Store(root).state.read_runs().get("crawl")
    run = kept.model_dump(mode="json") if kept else {}
    with sqlite3.connect(root / ".incidentlib" / "prefect" / "prefect.db") as db:
        states = [row[0] for row in db.execute("SELECT state_type FROM flow_run")]
    return f"{run.get('state')} / {','.join(states)}"


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_a_crawl_within_seconds_and_the_run_is_cancelled(
    command: Callable[..., subprocess.Popen[str]],
    root: Path,
    slow_site: Site,
    signum: signal.Signals,
    status: int,
) -> None:
    crawl = command("crawl")
    wait_for(lambda: sum(slow_site.requests.values()) >= 2, "the crawl to be fetching", timeout=120)
    took, err = stop_and_time(crawl, signum)
    assert crawl.returncode == status, err
    assert took < 10, f"took {took:.1f} s to stop: {err}"
    assert f"stopped by {signum.name}" in err and "Traceback" not in err
    assert crawl_state(root) == "cancelled / CANCELLED"
    assert validate(Store(root)).faults == []
    assert wait_for(lambda: not processes_of(root / ".incidentlib" / "prefect"), "its server to be gone", 10)


def test_a_second_signal_exits_at_once(
    command: Callable[..., subprocess.Popen[str]], root: Path, slow_site: Site
) -> None:
    crawl = command("crawl")
    wait_for(lambda: sum(slow_site.requests.values()) >= 2, "the crawl to be fetching", timeout=120)
    took, _ = stop_and_time(crawl, signal.SIGTERM, signal.SIGTERM)
    assert crawl.returncode == 143 and took < 5
    assert validate(Store(root)).faults == []
    assert wait_for(lambda: not processes_of(root / ".incidentlib" / "prefect"), "its server to be gone", 10)


def test_a_killed_command_leaves_no_server_behind(
    command: Callable[..., subprocess.Popen[str]], root: Path, slow_site: Site
) -> None:
    crawl = command("crawl")
    wait_for(lambda: sum(slow_site.requests.values()) >= 1, "the crawl to be fetching", timeout=120)
    assert processes_of(root / ".incidentlib" / "prefect"), "the command's own server runs while it works"
    crawl.send_signal(signal.SIGKILL)
    crawl.communicate(timeout=30)
    assert wait_for(lambda: not processes_of(root / ".incidentlib" / "prefect"), "its server to be gone", 10)
    assert validate(Store(root)).faults == []


def test_a_crawl_run_offline_says_nothing_of_telemetry(
    command: Callable[..., subprocess.Popen[str]], root: Path, slow_site: Site
) -> None:
    for path in list(slow_site.pages):
        if path != "/ok.md":
            del slow_site.pages[path]
    (root / "sources" / "slow.yaml").write_text(f"- url: {slow_site.url('/ok.md')}\n", encoding="utf-8")
    crawl = command("crawl", "--json")
    out, err = crawl.communicate(timeout=180)
    assert crawl.returncode == 0, err
    assert json.loads(out)["counts"]["new"] == 1
    assert "telemetry" not in err.lower() and "Traceback" not in err and "ERROR" not in err, err


def test_a_command_outside_flows_stops_on_sigterm_with_one_line(root: Path, make_draft: Callable[..., Draft]) -> None:
    draft = make_draft()
    Store(root).write_draft(draft)
    before = Store(root).path("draft", draft.id).read_bytes()
    env = {name: value for name, value in os.environ.items() if not name.startswith("INCIDENTLIB_")}
    edit = subprocess.Popen(
        [str(BIN / "incidentlib"), "edit", draft.id, "--by", "ann", "--root", str(root)],
        env=env | {"EDITOR": f"{sys.executable} -c 'import time; time.sleep(60)'"},  # an editor left open
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: psutil.Process(edit.pid).children(), "the editor to be open")
    finally:
        took, err = stop_and_time(edit, signal.SIGTERM)
    assert edit.returncode == 143 and took < 5
    assert err.splitlines() == ["stopped by SIGTERM: the work in flight was cancelled; what was written is whole"]
    assert Store(root).path("draft", draft.id).read_bytes() == before


def handles(pid: int, signum: signal.Signals, field: str = "SigCgt") -> bool:
    """Whether the process catches (SigCgt) or ignores (SigIgn) `signum` (Linux: /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(line for line in status.splitlines() if line.startswith(f"{field}:")).split()[1], 16)
    return bool(mask & (1 << (signum - 1)))


# An editor that takes Ctrl-C as vim does, for itself: here it saves a change and quits.
_EDITOR = """
import json, os, signal, sys

def save(*_):
    path = sys.argv[1]
    lines = [line for line in open(path).read().splitlines(True) if not line.startswith("#")]
    draft = json.loads("".join(lines))
    draft["org"] = "Acme Corp"
    open(path, "w").write(json.dumps(draft))
    os._exit(0)

signal.signal(signal.SIGINT, save)
open(os.path.join(os.path.dirname(__file__), "editor.ready"), "w").close()
while True:
    signal.pause()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_in_the_editor_is_the_editors(root: Path, make_draft: Callable[..., Draft], tmp_path: Path) -> None:
    draft = make_draft()
    Store(root).write_draft(draft)
    (tmp_path / "editor.py").write_text(_EDITOR, encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if not name.startswith("INCIDENTLIB_")}
    edit = subprocess.Popen(
        [str(BIN / "incidentlib"), "edit", draft.id, "--by", "ann", "--root", str(root)],
        env=env | {"EDITOR": f"{sys.executable} {tmp_path / 'editor.py'}", "VISUAL": ""},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a terminal's foreground group of its own
    )
    try:
        editor = wait_for(lambda: psutil.Process(edit.pid).children(), "the editor to be open")[0]
        wait_for((tmp_path / "editor.ready").exists, "the editor to take Ctrl-C")
        wait_for(lambda: handles(edit.pid, signal.SIGINT, "SigIgn"), "the command to leave Ctrl-C to it")
        assert not handles(editor.pid, signal.SIGQUIT, "SigIgn"), "the editor inherited the ignoring"
        os.killpg(edit.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
        out, err = edit.communicate(timeout=30)
    finally:
        if edit.poll() is None:
            os.killpg(edit.pid, signal.SIGKILL)  # the editor too, which holds the pipes
            edit.communicate()
    assert edit.returncode == 0, err
    assert out == f"{draft.id}: saved, now {draft.state.value}\n"
    saved = Store(root).read_draft(draft.id)
    assert saved.org == "Acme Corp" and saved.history[-1].by == "ann"


# A program that enters and leaves the interrupt module's bookkeeping on the main thread, over and
# over, each line of that module slowed (a trace function spinning 2 ms), so that a signal lands
# inside it: before the handler stopped taking a lock, half of them hung there for good.
_CHURN = """
import sys, time
from pipeline import interrupt

def slowed(frame, event, arg):
    if frame.f_code.co_filename != interrupt.__file__:
        return None
    def line(frame, event, arg):
        end = time.perf_counter() + 0.002
        while event == "line" and time.perf_counter() < end:
            pass
        return line
    return line

interrupt.install()
try:  # before "ready": the signal may come as soon as it is printed
    print("ready", flush=True)
    sys.settrace(slowed)
    while True:
        with interrupt.cooperating():
            pass
        interrupt.check()
except interrupt.Interrupted as exc:
    sys.exit(exc.exit_status)
"""


def test_a_signal_landing_in_the_interrupt_bookkeeping_still_stops_the_process() -> None:
    programs = [subprocess.Popen([sys.executable, "-c", _CHURN], stdout=subprocess.PIPE, text=True) for _ in range(8)]
    try:
        for program in programs:
            assert program.stdout is not None and program.stdout.readline() == "ready\n"
            program.send_signal(signal.SIGTERM)
        statuses = [program.wait(timeout=10) for program in programs]
    finally:
        for program in programs:
            if program.poll() is None:
                program.kill()
            program.communicate()
    assert statuses == [143] * 8


def test_sigterm_stops_a_crawl_extracting_a_large_page_within_seconds(
    command: Callable[..., subprocess.Popen[str]], root: Path, farm: SiteFarm, prefect_harness: str
) -> None:
    # 17 MB of paragraphs: about 30 s of extraction in a worker thread, which a stop leaves behind.
    paragraph = "<p>Der Ausfall dauerte lange und betraf viele Dienste im Cluster.</p>\n"
    site = farm.add_site("big")
    site.pages["/big.html"] = Page.html(f"<html><head><title>T</title></head><body>{paragraph * 250_000}</body></html>")
    (root / "sources" / "slow.yaml").write_text(f"- url: {site.url('/big.html')}\n", encoding="utf-8")
    crawl = command("crawl", api_url=prefect_harness)
    wait_for(lambda: site.bodies["/big.html"], "the page to be downloaded", timeout=120)
    # Reading the last of the body takes milliseconds: a second and a half of processor time
    # later, the page is being extracted.
    worked = cpu_seconds(crawl) + 1.5
    wait_for(lambda: cpu_seconds(crawl) > worked, "the page to be extracted")
    took, err = stop_and_time(crawl, signal.SIGTERM)
    assert crawl.returncode == 143, err
    assert took < 5, f"took {took:.1f} s to stop"
    assert "stopped by SIGTERM: the work in flight was cancelled" in err and "Traceback" not in err
    assert Store(root).state.read_runs()["crawl"].state == "cancelled"
    assert validate(Store(root)).faults == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_sigterm_while_the_command_line_loads_stops_it_with_one_line(root: Path) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("INCIDENTLIB_")}
    validate_ = subprocess.Popen(
        [str(BIN / "incidentlib"), "validate", "--root", str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The handler is in place before the command line is loaded: the signal lands while it loads.
    wait_for(lambda: handles(validate_.pid, signal.SIGTERM) or validate_.poll() is not None, "the handler")
    took, err = stop_and_time(validate_, signal.SIGTERM)
    assert validate_.returncode == 143 and took < 5, err
    assert err.splitlines() == ["stopped by SIGTERM: the work in flight was cancelled; what was written is whole"]


def stopped_fast(process: subprocess.Popen[str], root: Path, flow: str) -> None:
    """SIGTERM now: the command exits 143 within seconds, its run recorded as cancelled, the library valid."""
    took, err = stop_and_time(process, signal.SIGTERM)
    assert process.returncode == 143, err
    assert took < 5, f"took {took:.1f} s to stop"
    assert "stopped by SIGTERM" in err and "Traceback" not in err, err
    assert Store(root).state.read_runs()[flow].state == "cancelled"
    assert validate(Store(root)).faults == []


@pytest.mark.parametrize("flow", ["archive", "refresh"])
def test_sigterm_stops_an_archive_or_a_refresh_run_in_flight(
    command: Callable[..., subprocess.Popen[str]],
    archive_root: ArchiveRoot,
    slow_site: Site,
    prefect_harness: str,
    flow: str,
) -> None:
    # archive: the capture job stays pending and the run polls it; refresh: the page it checks stalls.
    root, wayback = archive_root.root, archive_root.wayback
    page = "/ok.md" if flow == "archive" else "/pm0.md"
    archive_root.store.write_draft(new_draft(SourceEntry(url=slow_site.url(page))))
    wayback.job_seconds = 3600
    env = settings_env(archive_settings(root, wayback, poll_timeout_s=3600))
    process = command(flow, api_url=prefect_harness, settings=env)
    if flow == "archive":
        wait_for(lambda: wayback.jobs, "a capture to be asked for")
    else:
        wait_for(lambda: slow_site.requests[page], "the page to be checked")
    stopped_fast(process, root, flow)


def test_sigterm_stops_a_promotion_waiting_for_a_busy_lock(
    command: Callable[..., subprocess.Popen[str]], root: Path, case_json: dict[str, Any], prefect_harness: str
) -> None:
    store = Store(root)
    draft = complete_draft(case_json, 1)
    store.write_draft(draft)

    def promoting() -> bool:
        """Whether the promotion holds the draft's lock: it then waits for the cases lock."""
        try:
            with store.state.lock(f"draft-{draft.id}", timeout=0):
                return False
        except LockBusy:
            return True

    with store.state.lock("cases"):  # another process allocating a case id, for longer than a stop may take
        promote = command("promote", api_url=prefect_harness)
        wait_for(promoting, "the promotion to wait for the cases lock")
        stopped_fast(promote, root, "promote")
    assert store.read_draft(draft.id).state == DraftState.APPROVED and store.ids("case") == []


# A command stopping the server it started, as pipeline.server does when a command ends: the
# "server" here takes SIGTERM, writes that it did, and goes on (a server slow to stop). The stop
# waits 5 s for it, then kills it; a second signal meanwhile must end the command at once.
_STOPPING = """
import subprocess, sys, threading
from pipeline import interrupt, server

told = sys.argv[1]
stubborn = "import pathlib, signal, sys, time\\n"
stubborn += f"signal.signal(signal.SIGTERM, lambda *_: pathlib.Path({told!r}).write_text('told'))\\n"
stubborn += "print('up', flush=True)\\nwhile True: time.sleep(1)\\n"
slow = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE, text=True, start_new_session=True)
assert slow.stdout.readline() == "up\\n"
interrupt.install()
try:
    with server._stopped_after(slow):
        print(slow.pid, flush=True)  # in the block: the signal may land as soon as this is out
        threading.Event().wait()  # until a signal
except interrupt.Interrupted as exc:
    sys.exit(exc.exit_status)
"""


def test_a_second_signal_while_the_server_is_being_stopped_exits_at_once(tmp_path: Path) -> None:
    told = tmp_path / "told"
    stopping = subprocess.Popen([sys.executable, "-c", _STOPPING, str(told)], stdout=subprocess.PIPE, text=True)
    assert stopping.stdout is not None
    slow = psutil.Process(int(stopping.stdout.readline()))
    try:
        stopping.send_signal(signal.SIGTERM)  # the command stops, and stops its server
        wait_for(told.exists, "the server to be told to stop")  # the command now waits up to 5 s for it to go
        took, _ = stop_and_time(stopping, signal.SIGTERM)
        assert stopping.returncode == 143 and took < 3, f"exit {stopping.returncode} after {took:.1f} s"
    finally:
        if stopping.poll() is None:
            stopping.kill()
        stopping.communicate()
        slow.kill()
