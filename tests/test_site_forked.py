"""A large build's workers forked from the build (pipeline.site.forked): the line they take files from, the
answer they wait for, and whole builds, each in a fresh process of its own (a test process may run threads
of earlier tests, and a build forks only when it runs one)."""

from __future__ import annotations

import json
import os
import pickle
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from test_site_incremental import _edit, _tree, write_library

from pipeline.errors import InvalidRecord
from pipeline.models import Case
from pipeline.settings import Settings
from pipeline.site.build import _CARD_SHARDS, _CARDS, _in_line, _known_cards, build_site
from pipeline.site.context import Card
from pipeline.site.forked import Answer, Child, Line, fork
from pipeline.site.tree import SiteTree
from pipeline.store import Store


def _forked(job: Callable[[], object], result: Path) -> Child:
    children: list[Child] = []
    fork(job, result, children.append)
    return children[0]


def test_a_line_gives_each_key_once_to_processes_taking_from_its_two_ends(tmp_path: Path) -> None:
    keys = [f"k{n:03d}" for n in range(500)]
    line = Line(keys, run=7)

    def front() -> list[str]:
        taken: list[str] = []
        while run := line.take(front=True):
            taken += run
        return taken

    child = _forked(front, tmp_path / "front.json.pickle")
    back: list[str] = []
    while run := line.take(front=False):
        back = run + back
    assert child.wait() == 0
    ahead = pickle.loads((tmp_path / "front.json.pickle").read_bytes())
    assert ahead + back == keys  # the worker's from the front, this process's from the back, none twice
    assert line.take(front=True) == [] == line.take(front=False)
    line.close()


def test_a_worker_killed_while_it_held_the_lines_lock_does_not_stop_the_build(tmp_path: Path) -> None:
    import fcntl

    line = Line(["a", "b", "c"])

    def holds_and_dies() -> None:
        fcntl.lockf(line._lock, fcntl.LOCK_EX)
        os._exit(9)  # killed holding the lock: the kernel lets it go

    assert _forked(holds_and_dies, tmp_path / "never").wait() == 9
    assert line.take(front=False) == ["a", "b", "c"]
    line.close()


def test_a_forked_process_hears_the_answer_given_after_the_fork_and_no_when_nobody_gives_it(tmp_path: Path) -> None:
    answer = Answer()

    def hears() -> list[bool | None]:
        answer.forked()
        return [answer.wait(), answer.given()]

    child = _forked(hears, tmp_path / "heard")
    answer.give(True)
    assert child.wait() == 0
    assert pickle.loads((tmp_path / "heard").read_bytes()) == [True, True]
    answer.close()
    silent = Answer()

    def waits() -> bool:
        silent.forked()
        return silent.wait()

    child = _forked(waits, tmp_path / "unanswered")
    silent.close()  # the build gone without answering: the worker reads the end of the pipe
    assert child.wait() == 0 and pickle.loads((tmp_path / "unanswered").read_bytes()) is False


def test_a_line_holds_a_languages_pages_together() -> None:
    keys = ["en/a", "api/x", "ko/a", "ko/b", "cases/y", "en/b", "index.html"]
    assert _in_line(keys, ("ko", "en")) == ["ko/a", "ko/b", "api/x", "cases/y", "index.html", "en/a", "en/b"]


# The builds, in a process of their own: `PARALLEL_FROM` and `READ_ASIDE_FROM` lowered so that a dozen
# cases reach them. What the forked reader read, as the build took it in, is counted ("read_aside").
_BUILDS = """
import json, os, sys, threading
from pathlib import Path
from pipeline.settings import Settings
from pipeline.site import build
from pipeline.site.context import Planned
from pipeline.store import Store

build.PARALLEL_FROM = 1
build.READ_ASIDE_FROM = 1
build.WORKER_START = 0  # an even share: a small library's would all stay in the build
root, out, how = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
store = Store(root)
settings = Settings(root=root)
main = os.getpid()
read_aside = []
reader_of = build._Workers.reader


def reader(workers):
    aside = reader_of(workers)
    if aside is None:
        return None

    def counted(ids):
        taken = aside(ids)

        def took():
            read = taken()
            read_aside.append(len(read))
            return read

        return took

    return counted


build._Workers.reader = reader
read_some = build._read_some
if how == "reader-dies":  # the process forked to read cases dies: the build reads them itself
    def dies(store, ids):
        if os.getpid() != main:
            os._exit(9)
        return read_some(store, ids)

    build._read_some = dies
if how == "reader-hangs":  # the reader says it reads, then waits for ever: the build is killed meanwhile
    def hang(store, ids):
        if os.getpid() == main:
            return read_some(store, ids)
        os.write(int(os.environ["READY_FD"]), f"{os.getpid()}\\n".encode())
        os.read(int(os.environ["NEVER_FD"]), 1)

    build._read_some = hang
if how == "dies":  # the first file a worker takes kills it: the build makes what it left
    planned_by = build.plan

    def plan(ctx, wanted=build.everything):
        planned = planned_by(ctx, wanted)
        first = next(key for key in planned if key.startswith("ko/"))
        made = planned[first]

        def deadly():
            if os.getpid() != main:
                os._exit(9)
            return made.make()

        planned[first] = Planned(made.inputs, deadly, made.group)
        return planned

    build.plan = plan
if how == "hangs":  # the worker's first file holds it until the build is killed; the build waits for that
    planned_by = build.plan
    go_r, go_w = os.pipe()
    begun = []

    def plan(ctx, wanted=build.everything):
        planned = planned_by(ctx, wanted)

        def held(made):
            def make():
                if not begun:
                    begun.append(1)
                    if os.getpid() != main:  # says it holds a file, lets the build go on, waits for ever
                        os.write(int(os.environ["READY_FD"]), f"{os.getpid()}\\n".encode())
                        os.write(go_w, b"x")
                        os.read(int(os.environ["NEVER_FD"]), 1)
                    else:
                        os.read(go_r, 1)
                return made.make()

            return Planned(made.inputs, make, made.group)

        return {key: held(made) for key, made in planned.items()}

    build.plan = plan
held = threading.Event()
if how == "threads":  # another thread runs: no fork, workers started as processes of their own
    threading.Thread(target=held.wait).start()
try:
    report = build.build_site(store, settings, out, workers=int(sys.argv[4]))
finally:
    held.set()
    print(json.dumps({"read_aside": sum(read_aside)}), file=sys.stderr)  # said too when the build fails
print(
    json.dumps(
        {
            "workers": report.workers,
            "written": len(report.written),
            "counts": report.counts(),
            "read": report.read,
            "read_aside": sum(read_aside),
        }
    )
)
"""


def _cached_cards(store: Store, folder: Path) -> list[Card]:
    site = SiteTree(store.state, folder)
    shards = [_known_cards(site.read_cache(_CARDS.format(n)))[1] for n in range(_CARD_SHARDS)]
    return [card for shard in shards for _, card in shard.values()]


def _killed_while_its_child_waits(root: Path, out: Path, how: str) -> None:
    """A build (`how`: "hangs", "reader-hangs") whose forked child says it is at work and then waits for
    ever, killed with SIGKILL (the build runs no code of its own): its child must be gone too, by the
    kernel, so that it never writes into a folder the next build owns."""
    ready_r, ready_w = os.pipe()
    never_r, never_w = os.pipe()
    held_r, held_w = os.pipe()  # its writing end held by the build and, once forked, its child
    build = subprocess.Popen(
        [sys.executable, "-c", _BUILDS, str(root), str(out), how, "2"],
        pass_fds=(ready_w, never_r, held_w),
        env={**os.environ, "READY_FD": str(ready_w), "NEVER_FD": str(never_r)},
        cwd=Path(__file__).parent.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for end in (ready_w, never_r, held_w):
        os.close(end)
    with os.fdopen(ready_r) as ready:
        child = int(ready.readline())  # the child is at work
    assert child != build.pid
    build.kill()
    build.wait()
    # Every process holding the pipe's writing end is gone once it reads as ended: the child too.
    assert select.select([held_r], [], [], 30)[0], f"the child ({how}) outlived its build"
    assert os.read(held_r, 1) == b""
    for end in (held_r, never_w):
        os.close(end)


def test_a_forked_worker_dies_with_its_build(store: Store, make_case: Callable[..., Case], tmp_path: Path) -> None:
    """A worker making a file when its build is killed is killed with it."""
    library = write_library(store, make_case, 12)
    build_site(library, Settings(root=library.root), tmp_path / "first", workers=1)  # the stems analysed
    _killed_while_its_child_waits(library.root, tmp_path / "site", "hangs")


def test_the_process_reading_cases_aside_dies_with_its_build(
    store: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    """The process forked to read cases, reading when its build is killed, is killed with it, and the next
    build finds the scratch folder it read into and removes it."""
    library = write_library(store, make_case, 12)
    _killed_while_its_child_waits(library.root, tmp_path / "site", "reader-hangs")
    left = list(library.state.folder("tmp", make=False).glob("site-*"))
    assert left  # the killed build's scratch folder, the reader's result never written into it
    build_site(library, Settings(root=library.root), tmp_path / "site", workers=1)
    assert not [path for path in left if path.exists()]


def _run_build(root: Path, out: Path, how: str = "plain", workers: int = 2) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BUILDS, str(root), str(out), how, str(workers)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
    )


def _build(root: Path, out: Path, how: str, workers: int = 2) -> dict[str, object]:
    done = _run_build(root, out, how, workers)
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_a_build_forked_on_two_processes_gives_one_processs_bytes_whatever_befalls_its_worker(
    store: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    """Forked (one thread), started (another thread runs), a forked worker dead at its first file, the
    process forked to read cases dead: the same files as one process makes, on a first build and after an
    edit."""
    library = write_library(store, make_case, 12)
    # The one-process build here (it analyses the Korean words, which the others then find analysed).
    alone = build_site(library, Settings(root=library.root), tmp_path / "alone", workers=1)
    forked = _build(library.root, tmp_path / "forked", "plain")
    started = _build(library.root, tmp_path / "started", "threads")
    died = _build(library.root, tmp_path / "died", "dies")
    reader_died = _build(library.root, tmp_path / "reader-died", "reader-dies")
    builds = (forked, started, died, reader_died)
    assert [report["workers"] for report in builds] == ["forked", "started", "forked", "forked"]
    assert alone.workers == "none" and all(report["counts"] == alone.counts() for report in builds)
    # Forked, the last 45 % of the cases (5 of 12) were read by a process forked for it; a reader that died
    # read none, and the build read every case itself; with another thread running, nothing is forked.
    assert [report["read_aside"] for report in builds] == [5, 0, 5, 0]
    assert all(report["read"] == 12 for report in builds)
    site = _tree(tmp_path / "alone")
    assert site == _tree(tmp_path / "forked") == _tree(tmp_path / "started") == _tree(tmp_path / "died")
    assert site == _tree(tmp_path / "reader-died")
    assert not [key for key in _tree(tmp_path / "died") if key.endswith(".tmp")]
    # What the cards worked out is in their cache, though a forked worker made the files that asked for it.
    cached = _cached_cards(library, tmp_path / "forked")
    assert cached and all(name in card.__dict__ for card in cached for name in Card.CACHED)
    _edit(library, "IL-0009", summary={"en": "Edited, then built again.", "ko": "고친 뒤 다시 지은 요약."})
    again = build_site(library, Settings(root=library.root), tmp_path / "alone", workers=1)
    forked_again = _build(library.root, tmp_path / "forked", "plain")
    assert len(again.written) == forked_again["written"] and 0 < len(again.written) < 100
    assert _tree(tmp_path / "alone") == _tree(tmp_path / "forked") != site


def test_a_folder_removed_or_emptied_since_its_build_is_built_again_as_a_new_one(
    store: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    """`rm -rf site` (or its files removed) and a build: a first build's, every file made again on every
    process to the same bytes, and its report a first build's (not the cache's files named missing, made
    again on this process alone, and those no longer planned reported removed)."""
    import shutil

    library = write_library(store, make_case, 12)
    out = tmp_path / "site"
    first = _build(library.root, out, "plain")
    site = _tree(out)
    shutil.rmtree(out)
    removed = _build(library.root, out, "plain")
    assert removed["workers"] == first["workers"] == "forked"
    assert removed["counts"] == first["counts"] == {"written": len(site), "unchanged": 0, "removed": 0}
    assert _tree(out) == site
    for path in out.iterdir():  # emptied, the folder itself kept
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    emptied = _build(library.root, out, "plain")
    assert emptied["workers"] == "forked" and emptied["counts"] == first["counts"] and _tree(out) == site
    assert _build(library.root, out, "plain")["written"] == 0  # and the cache trusted again after it


def test_a_case_that_fails_to_read_is_named_as_ever_whichever_process_read_it(
    store: Store, make_case: Callable[..., Case], tmp_path: Path
) -> None:
    """Two broken cases, one in the part this process reads and one in the part read aside: the build stops
    on the first in id order, with the same one-line fault as a build on one process."""
    library = write_library(store, make_case, 12)
    for case_id in ("IL-0011", "IL-0003"):
        path = library.path("case", case_id)
        path.write_text(path.read_text(encoding="utf-8").replace('"title"', '"titel"', 1), encoding="utf-8")
    with pytest.raises(InvalidRecord) as alone:
        build_site(library, Settings(root=library.root), tmp_path / "alone", workers=1)
    forked = _run_build(library.root, tmp_path / "forked")
    assert forked.returncode != 0
    assert '{"read_aside": 4}' in forked.stderr  # the reader read its five but IL-0011, and handed them over
    assert "cases/IL-0003.json" in str(alone.value) and "IL-0011" not in str(alone.value)
    assert str(alone.value).splitlines()[0] in forked.stderr and "IL-0011" not in forked.stderr
    # Mended, the other is named next, by either build.
    path = library.path("case", "IL-0003")
    path.write_text(path.read_text(encoding="utf-8").replace('"titel"', '"title"', 1), encoding="utf-8")
    with pytest.raises(InvalidRecord, match=r"cases/IL-0011\.json"):
        build_site(library, Settings(root=library.root), tmp_path / "alone", workers=1)
    again = _run_build(library.root, tmp_path / "forked")
    assert again.returncode != 0 and "cases/IL-0011.json" in again.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="forking is for Linux only")
def test_this_process_knows_whether_it_runs_one_thread() -> None:
    from pipeline.site.forked import single_threaded

    held = threading.Event()
    thread = threading.Thread(target=held.wait)
    thread.start()
    try:
        assert not single_threaded()
    finally:
        held.set()
        thread.join()
