"""Temporary folders: a build killed outright (SIGKILL: nothing of it runs after) leaves its folder, and the
next build removes it as it starts; nothing is left in the system's temporary folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pipeline.models import Case
from pipeline.site import build
from pipeline.store import Store

# Enough cases that the first build makes more than build.PARALLEL_FROM files, on worker processes that
# share a temporary folder: about five files a case are made on them (the rest, the API's and the search's,
# by the build itself).
CASES = build.PARALLEL_FROM // 4


def _left(store: Store, tmp: Path) -> list[Path]:
    """The temporary folders a build keeps: in the data root's state now, in the system's before."""
    scratch = store.state.dir / "tmp"
    return [*tmp.glob("incidentlib-site-*"), *(scratch.iterdir() if scratch.is_dir() else [])]


def test_a_killed_site_build_leaves_nothing_once_the_next_starts(
    store: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    for n in range(1, CASES + 1):
        store.write_case(make_case(f"IL-{n:04d}"))
    tmp = tmp_path / "tmp"  # the system's temporary folder, for these processes
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "INCIDENTLIB_ROOT": str(store.root)}
    command = [sys.executable, "-m", "pipeline", "site"]
    # Its own process group: the build and the workers it starts are killed at once, as a machine stopping.
    process = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while not _left(store, tmp) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)  # polling for the folder to appear: the kill must land while it is there
        assert _left(store, tmp), "the build ended or timed out before making its temporary folder"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert _left(store, tmp), "SIGKILL runs no clean-up: the folder is still there"

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert _left(store, tmp) == []
    assert (store.root / "site" / "en" / "cases" / f"IL-{CASES:04d}" / "index.html").is_file()
