"""Prefect's environment is set before Prefect is imported, or the mistake is loud.

Prefect reads its settings once, when first imported: each test runs a Python of its own,
so that what it imports first is what the test says.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
from helpers import REPO

ELSEWHERE = "http://127.0.0.1:9/api"


def python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`code` run by a Python of its own, on this checkout, with no Prefect variable of the operator's."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PREFECT_", "INCIDENTLIB_"))}
    env |= {"PYTHONPATH": str(REPO), "PREFECT_HOME": str(tmp_path / "prefect"), "DO_NOT_TRACK": "1"}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )


def test_the_environment_set_first_is_the_one_prefect_reads(tmp_path: Path) -> None:
    done = python(
        "from pipeline.prefect_env import prefect_environment\n"
        f"prefect_environment(api_url={ELSEWHERE!r}, logging_level='ERROR')\n"
        "import pipeline.flows\n"
        "from prefect.settings import get_current_settings\n"
        "settings = get_current_settings()\n"
        "print(settings.api.url, settings.logging.level, settings.server.ephemeral.enabled)\n"
        f"prefect_environment(api_url={ELSEWHERE!r})  # the same server again: nothing to refuse\n"
        "print('again')\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [ELSEWHERE, "ERROR", "False", "again"]


def test_prefect_imported_before_its_environment_is_refused_naming_both_servers(tmp_path: Path) -> None:
    done = python(
        "import pipeline.flows\n"
        "from pipeline.prefect_env import prefect_environment\n"
        f"prefect_environment(api_url={ELSEWHERE!r})\n",
        tmp_path,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: Prefect was imported before its environment was set"), done.stderr
    assert f"it reports to no server, not to {ELSEWHERE}" in last


def test_a_server_named_too_late_is_refused_even_when_prefect_had_another(tmp_path: Path) -> None:
    done = python(
        "import os\n"
        "os.environ['PREFECT_API_URL'] = 'http://127.0.0.1:8/api'\n"
        "import prefect\n"
        "from pipeline.prefect_env import prefect_environment\n"
        f"prefect_environment(api_url={ELSEWHERE!r})\n",
        tmp_path,
    )
    assert done.returncode == 1
    assert f"it reports to http://127.0.0.1:8/api, not to {ELSEWHERE}" in done.stderr, done.stderr


def test_loading_the_command_line_imports_no_prefect(tmp_path: Path) -> None:
    done = python(
        "import sys\n"
        "import pipeline.cli, pipeline.main, pipeline.server, pipeline.web\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'prefect'))\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_process_a_serve_run_started_imports_the_flows_without_watching(tmp_path: Path) -> None:
    """A process a run started inherits the run's environment; its parent is not the `serve` named,
    so importing the flows there neither exits nor watches (pipeline.lifeline)."""
    done = python(
        "import os, threading\n"
        "os.environ['INCIDENTLIB_SERVE_PID'] = str(os.getpid())\n"
        "os.environ['PREFECT__FLOW_RUN_ID'] = '00000000-0000-0000-0000-000000000000'\n"
        "import pipeline.flows\n"
        "print(sorted(t.name for t in threading.enumerate() if t.name == 'parent-watchdog'), 'imported')\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "imported"]


def test_a_serve_run_follows_its_serve_from_the_moment_the_flows_are_loaded(tmp_path: Path) -> None:
    """Prefect's engine loads the flows before it marks the run as running and talks to a server that
    goes with the `serve`: a run killed in between must stop too, not retry that server for minutes."""
    run = (
        "import threading, pipeline.flows\n"
        "print(*[t.name for t in threading.enumerate() if t.name == 'parent-watchdog'], flush=True)\n"
        "threading.Event().wait()\n"
    )
    done = python(  # the `serve`: it starts the run, sees it armed, and dies without a word to it
        "import os, subprocess, sys\n"
        "os.environ['INCIDENTLIB_SERVE_PID'] = str(os.getpid())\n"
        "os.environ['PREFECT__FLOW_RUN_ID'] = '00000000-0000-0000-0000-000000000000'\n"
        f"run = subprocess.Popen([sys.executable, '-c', {run!r}],\n"
        "                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)\n"
        "print(run.pid, run.stdout.readline().strip(), flush=True)\n"
        "os._exit(0)\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    pid, *armed = done.stdout.split()
    assert armed == ["parent-watchdog"], done.stdout
    try:
        psutil.Process(int(pid)).wait(timeout=15)
    except psutil.NoSuchProcess:
        pass  # gone already
    assert not psutil.pid_exists(int(pid)) or psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE
