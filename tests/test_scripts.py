"""scripts/test, the README's test command: what it installs, when, and that pytest's exit status is its own.

It is run for real with every command it calls stood in for by a small script on a PATH of its own
(`python`, `id`, `apt-get`, `dpkg-query`, `chromium`), each writing what it was asked into a log: the
suite must not install anything, nor repoint the editable install at a temporary folder. Only pytest
is run for real, on one small test file, to show the status comes through as pytest gives it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

SCRIPT = REPO / "scripts" / "test"
BASH = shutil.which("bash") or "/bin/bash"


def stand_in(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f'#!{BASH}\necho "{name} $*" >> "$LOG"\n{body}\n')
    path.chmod(0o755)


def run(
    tmp_path: Path, *args: str, uid: int = 0, chromium: bool = True, fonts: bool = True, real_pytest: bool = False
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """scripts/test ARGS with the stand-ins; what it printed and did, and the commands it called in order."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    log = tmp_path / "log"
    log.write_text("")
    pytest_run = f'exec {sys.executable} "$@"' if real_pytest else 'exit "${PYTEST_STATUS:-0}"'
    stand_in(bin_, "python", f'if [ "$1 $2" = "-m pip" ]; then exit 0; fi\n{pytest_run}')
    stand_in(bin_, "id", f'[ "$1" = -u ] && echo {uid}')
    stand_in(bin_, "apt-get", "exit 0")
    installed = "install ok installed" if fonts else "unknown ok not-installed"
    stand_in(bin_, "dpkg-query", f"printf '%s' '{installed}'")
    if chromium:
        stand_in(bin_, "chromium", "exit 0")
    else:
        (bin_ / "chromium").unlink(missing_ok=True)
    env = {
        "PATH": str(bin_),  # the stand-ins alone: the script needs nothing else but bash
        "LOG": str(log),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "HOME": str(tmp_path),
        "PYTEST_STATUS": os.environ.get("PYTEST_STATUS", "0"),
    }
    done = subprocess.run([BASH, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=300)
    return done, log.read_text().splitlines()


def test_it_installs_the_dev_extra_and_as_root_what_the_browser_tests_need(tmp_path: Path) -> None:
    done, calls = run(tmp_path, "-x", "tests/test_ids.py", chromium=False, fonts=False)
    assert done.returncode == 0, done.stderr
    assert calls == [
        "python -m pip install -e .[dev]",
        "dpkg-query -W -f=${Status} fonts-noto-cjk",
        "id -u",
        "apt-get update -qq",
        "apt-get install -y -qq chromium fonts-noto-cjk",
        "python -m pytest -x tests/test_ids.py",
    ]
    assert done.stderr == "scripts/test: installing for the browser tests: chromium fonts-noto-cjk (apt-get)\n"


def test_with_everything_there_it_installs_nothing_else(tmp_path: Path) -> None:
    done, calls = run(tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert [c for c in calls if not c.startswith("dpkg-query")] == [
        "python -m pip install -e .[dev]",
        "python -m pytest",
    ]


def test_not_root_it_says_how_to_install_the_browser_and_runs_the_tests_all_the_same(tmp_path: Path) -> None:
    done, calls = run(tmp_path, uid=1000, chromium=False)
    assert done.returncode == 0
    assert not [c for c in calls if c.startswith("apt-get")] and calls[-1] == "python -m pytest"
    assert done.stderr == (
        "scripts/test: missing for the browser tests: chromium; install as root (sudo apt-get install chromium, "
        "on Debian or Ubuntu) and run this again; the other tests run all the same\n"
    )


@pytest.mark.parametrize("status", [1, 5])
def test_pytests_exit_status_is_the_scripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    monkeypatch.setenv("PYTEST_STATUS", str(status))
    assert run(tmp_path)[0].returncode == status


def test_it_runs_the_real_suite_and_no_test_collected_is_not_hidden(tmp_path: Path) -> None:
    flags = ["-p", "no:cacheprovider", "-n", "0", "-q"]
    passed, _ = run(tmp_path, *flags, "tests/test_surt.py", real_pytest=True)
    assert passed.returncode == 0 and " passed" in passed.stdout, passed.stdout + passed.stderr
    nothing, _ = run(tmp_path, *flags, "tests/test_surt.py", "-k", "no_such_test", real_pytest=True)
    assert nothing.returncode == 5, nothing.stdout + nothing.stderr


def test_ci_runs_the_script_after_the_checks() -> None:
    steps = [
        line for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line and line[0] != "#"
    ]
    assert steps[-1] == "scripts/test", "the suite last, by the README's own command"
    assert steps.index("NO_MKDOCS_2_WARNING=1 mkdocs build --strict") < steps.index("scripts/test")
    assert os.access(SCRIPT, os.X_OK)
