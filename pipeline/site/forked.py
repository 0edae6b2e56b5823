"""A large build's files made on every core by processes forked from the build once it has planned (and,
before it plans, its cases read on two by one forked to read part of them: `build._Workers.reader`).

    if single_threaded():                          # forking is safe only then
        line = Line(keys, folder)                   # the keys to make, shared by this process and those forked
        child = fork(lambda: work(line), result)    # a worker with this process's plan: no start, no copy
        while run := line.take(front=False): ...    # this process takes from the back, workers from the front
        child.wait()

A forked worker needs no start: it has the build's modules, cases and plan as the build has them, so it makes
files from the moment it is forked, and nothing is read, planned or checked twice. Which files each process
makes is settled as they go, not beforehand: the keys stand in one line, and each process takes the next run
of them when it is ready for more (workers from the front, the build from the back, where they meet), so that
all finish together whatever else each has to do (the build's search index, a worker's cases.db). The line's
two ends are two counters in memory the processes share, moved under a POSIX lock (`fcntl.lockf`), which the
kernel lets go when its holder dies: a worker killed while it held it cannot stop the build.

Forked only when the build's process runs one thread (Linux: /proc/self/task): a lock another thread held at
the fork (a Prefect flow's, a server's, a native library's pool) would stay held in the child for ever.
Otherwise the build starts its workers as processes of their own (`pipeline.site.worker`).

Written here rather than with `multiprocessing` or `concurrent.futures`: their pools send each job's function
and result through pickles, and a page's function holds the whole site's plan.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import pickle
import select
import signal
import struct
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, NoReturn

from pipeline.lifeline import die_with_parent

__all__ = ["Answer", "Child", "Line", "fork", "single_threaded"]

_ENDS = struct.Struct("qq")  # the line's front and back, as indexes into its keys


def single_threaded() -> bool:
    """Whether this process runs one thread only (Linux), the one case where forking it is safe."""
    if sys.platform != "linux":
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class Line:
    """`keys` in the order they are made, shared by this process and the processes it forks after making
    it: each takes the next run of them from its end (`take`), none twice."""

    def __init__(self, keys: Sequence[str], run: int = 8) -> None:
        self.keys = list(keys)
        self.run = run
        self._ends = mmap.mmap(-1, _ENDS.size)  # anonymous and shared: the forked processes see its changes
        _ENDS.pack_into(self._ends, 0, 0, len(self.keys))
        # The lock's file: unnamed, in the system's temporary folder (local, where a data root on a network
        # share might not lock), gone when the last process holding it closes it.
        self._file = tempfile.TemporaryFile()
        self._lock = self._file.fileno()

    def take(self, front: bool) -> list[str]:
        """The next run of keys from the front (a worker) or the back (the build); none when none is left."""
        fcntl.lockf(self._lock, fcntl.LOCK_EX)  # a process's own: a forked process does not inherit it
        try:
            start, end = _ENDS.unpack_from(self._ends, 0)
            if front:
                taken = range(start, min(end, start + self.run))
                _ENDS.pack_into(self._ends, 0, taken.stop, end)
            else:
                taken = range(max(start, end - self.run), end)
                _ENDS.pack_into(self._ends, 0, start, taken.start)
        finally:
            fcntl.lockf(self._lock, fcntl.LOCK_UN)
        return [self.keys[n] for n in taken]

    def close(self) -> None:
        self._file.close()
        self._ends.close()


class Answer:
    """A yes or no this process gives the processes it forks after making it, once it knows (a pipe): a
    forked process asks between its runs (`given`) or waits for it (`wait`: no, when this process is gone)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        self._said: bool | None = None

    def give(self, yes: bool, count: int = 1) -> None:
        """The answer, to `count` forked processes (a byte each: each reads one)."""
        with suppress(OSError):
            os.write(self._write, (b"y" if yes else b"n") * count)

    def forked(self) -> None:
        """In a forked process: its copy of the writing end closed, so that the answer ends when the
        process that gives it is gone."""
        os.close(self._write)

    def given(self) -> bool | None:
        """The answer when it came, without waiting; None when it has not."""
        if self._said is None and select.select([self._read], [], [], 0)[0]:
            self._said = os.read(self._read, 1) == b"y"
        return self._said

    def wait(self) -> bool:
        if self._said is None:
            self._said = os.read(self._read, 1) == b"y"
        return self._said

    def close(self) -> None:
        for end in (self._read, self._write):
            with suppress(OSError):
                os.close(end)


class Child:
    """A forked process as the build waits for it: its pid, and `poll`, `wait` and `kill` as a Popen's."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


def fork(
    job: Callable[[], Any],
    result: Path,
    keep: Callable[[Child], None],
    quiet: tuple[type[BaseException], ...] = (),
) -> None:
    """`job` run in a process forked now, its return value pickled into the file `result`; the process exits
    with 0 then, 1 when the job raised (its traceback on standard error), 4 when it raised one of `quiet`
    (said nothing) or its parent is gone, 130 on Ctrl-C. It never returns into the caller's code: no
    `finally` or `atexit` of the build runs twice. The kernel kills it when this process dies (Linux).

    Ctrl-C and SIGTERM are held from just before the fork until the child is in its `try` and this process
    has handed it to `keep` (which records it, to be waited for or killed): neither process can be stopped
    in between, where a child would unwind the build's own stack and a parent would lose its child."""
    for stream in (sys.stdout, sys.stderr):  # what they buffered is written once, not once a process
        with suppress(Exception):
            stream.flush()
    parent = os.getpid()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        pid = os.fork()
        if pid == 0:
            _child(job, result, quiet, parent, held)
        keep(Child(pid))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


_STOPS = {signal.SIGINT, signal.SIGTERM}


def _child(
    job: Callable[[], Any], result: Path, quiet: tuple[type[BaseException], ...], parent: int, held: set[int]
) -> NoReturn:
    code = 1
    try:
        die_with_parent(parent)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        result.write_bytes(pickle.dumps(job(), protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    except KeyboardInterrupt:
        code = 130
    except BaseException as error:
        if isinstance(error, quiet):
            code = 4
        else:
            traceback.print_exc()
    finally:
        with suppress(BaseException):
            sys.stderr.flush()
        os._exit(code)
