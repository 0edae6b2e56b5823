"""Stopping on a signal: a stop asked for once, obeyed by in-flight work in any thread.

    signal_handlers()                  # a command that runs flows, and each flow body
    report = interrupt.run(coro)       # instead of asyncio.run, in the library
    interrupt.check()                  # between items of synchronous work
    with interrupt.interruptible(): …  # synchronous work safe to abandon anywhere (a lock wait)

A first SIGTERM or SIGINT asks every running piece of work to stop: each coroutine run
through `run` is cancelled in its own thread's event loop, so a crawl, an archive run or
a refresh ends within seconds, whatever it was waiting for, a page being extracted in a
worker thread included (that thread is left behind, see `run`). What was being written is
written whole or not at all (writes are atomic), and what was not reached waits for the
next run. A second signal exits at once.

Outside cooperative work (no flow running), the first signal raises `Interrupted` in the
main thread, as Ctrl-C raises KeyboardInterrupt. The command line turns it into the exit
status a shell expects: 128 plus the signal's number (130 for SIGINT, 143 for SIGTERM).

The handler takes no lock and waits for nothing: it runs on the main thread between two
bytecodes, wherever that thread is, so a lock the main thread might hold there would hang
it for good. It sets the request, then hands each running loop its cancellation through
`call_soon_threadsafe`, which only appends to a deque and writes a byte to a pipe.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import queue
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

__all__ = [
    "Interrupted",
    "check",
    "cooperating",
    "install",
    "interruptible",
    "requested",
    "reset",
    "run",
    "signal_handlers",
]

T = TypeVar("T")


class Interrupted(BaseException):
    """A signal asked the process to stop. A BaseException, as KeyboardInterrupt is, so that no
    `except Exception` written for a source's failure can swallow it."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum

    @property
    def summary(self) -> str:
        """The one line a command prints when a signal stopped it."""
        return f"{self}: the work in flight was cancelled; what was written is whole"


class _Stop:
    """The stop request and the work that obeys it. Shared with the signal handler without a lock:
    each field is read or changed by one bytecode-level operation (a set's add, discard or copy, an
    attribute's store), which a handler cannot split, as it runs only between bytecodes."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._running: set[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = set()
        # How deep the main thread is in work that obeys a stop request without being raised at;
        # changed by the main thread alone, the one the handler runs on.
        self.main_cooperating = 0

    def request(self, signum: int) -> None:
        self.signum = signum
        for loop, task in self._running.copy():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # that loop has just closed: its work is over
                pass

    def enter(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        # Added first, checked after: a request that came before the add is seen here, and one
        # that comes after it finds the task in the set. Either way the task is stopped.
        self._running.add((loop, task))
        if self.signum is not None:
            self._running.discard((loop, task))
            raise Interrupted(self.signum)

    def leave(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        self._running.discard((loop, task))


_STOP = _Stop()


def requested() -> int | None:
    """The signal that asked to stop, or None."""
    return _STOP.signum


def check() -> None:
    """Raise Interrupted when a stop was asked for: call it between items of synchronous work."""
    if _STOP.signum is not None:
        raise Interrupted(_STOP.signum)


class _DaemonThreads(concurrent.futures.ThreadPoolExecutor):
    """The pool `asyncio.to_thread` uses inside `run`: the standard one's size, but daemon threads,
    so that a process told to stop exits without waiting for a job still running (a plain pool's
    threads are joined when the interpreter exits: 30 s for a large page being extracted). A
    ThreadPoolExecutor by type only, as asyncio takes no other kind as a loop's default."""

    def __init__(self) -> None:
        super().__init__()  # sets _max_workers as the standard pool does; its own threads never start
        self._jobs: queue.SimpleQueue[tuple[concurrent.futures.Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._idle = threading.Semaphore(0)
        self._workers: list[threading.Thread] = []

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((future, functools.partial(fn, *args, **kwargs)))
        if not self._idle.acquire(blocking=False) and len(self._workers) < self._max_workers:
            worker = threading.Thread(target=self._work, name=f"interrupt-run-{len(self._workers)}", daemon=True)
            self._workers.append(worker)
            worker.start()
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, call = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as exc:  # handed to whoever awaits it, as the standard pool does
                    future.set_exception(exc)
            del job, future, call  # the result is the caller's to keep, not this idle thread's
            self._idle.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
        for _ in self._workers:
            self._jobs.put(None)
        if wait:
            for worker in self._workers:
                worker.join()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, cancelled when a stop is asked for; raises Interrupted then.

    After a stop it does not wait for the jobs still running in worker threads
    (`asyncio.to_thread`: a large page being extracted takes half a minute): they are left to
    finish or to end with the process. That is safe because every write is atomic (a temporary
    file renamed into place), so a thread cut off at exit leaves each record whole, and a lock
    it holds is released by the system when the process ends.
    """

    async def main() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None
        _STOP.enter(loop, task)
        try:
            return await coro
        finally:
            _STOP.leave(loop, task)

    if _STOP.signum is not None:
        coro.close()
        raise Interrupted(_STOP.signum)
    with cooperating():
        loop = asyncio.new_event_loop()
        threads = _DaemonThreads()
        loop.set_default_executor(threads)
        asyncio.set_event_loop(loop)
        try:
            return loop.run_until_complete(main())
        except asyncio.CancelledError:
            if _STOP.signum is None:
                raise
            raise Interrupted(_STOP.signum) from None
        finally:
            try:
                _finish(loop, threads)
            finally:
                asyncio.set_event_loop(None)
                loop.close()


def _finish(loop: asyncio.AbstractEventLoop, threads: _DaemonThreads) -> None:
    """What asyncio.run does on the way out, but waiting for the worker threads only without a stop."""
    left = asyncio.all_tasks(loop)
    for task in left:
        task.cancel()
    if left:
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    if _STOP.signum is None:
        loop.run_until_complete(loop.shutdown_default_executor())
    else:
        threads.shutdown(wait=False, cancel_futures=True)


@contextmanager
def cooperating() -> Iterator[None]:
    """While inside, a first signal is a request that the work obeys, not an exception raised at it.

    Counted for the main thread alone: the handler runs there, and raises there or not."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = _STOP.main_cooperating
    try:  # set inside the try and put back as it was: a signal between two lines cannot skew it
        _STOP.main_cooperating = saved + 1
        yield
    finally:
        _STOP.main_cooperating = saved


@contextmanager
def interruptible() -> Iterator[None]:
    """While inside, a signal raises Interrupted here at once, even within cooperating work: for
    synchronous work on the main thread that is safe to abandon at any point (each write atomic,
    what is left done by the next run), such as a wait for a file lock another process holds."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = _STOP.main_cooperating
    try:
        _STOP.main_cooperating = 0
        check()  # a request that came before the line above
        yield
    finally:
        _STOP.main_cooperating = saved


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _STOP.signum is not None:
        os._exit(128 + signum)  # a second signal: out at once (a server we started watches us)
    _STOP.request(signum)
    if _STOP.main_cooperating == 0 and threading.current_thread() is threading.main_thread():
        raise Interrupted(signum)


def install() -> None:
    """Take SIGTERM and SIGINT (main thread only; elsewhere nothing happens)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _on_signal)


@contextmanager
def signal_handlers() -> Iterator[None]:
    """SIGTERM and SIGINT handled as above while inside, put back as they were after.

    A flow body takes them again: Prefect's engine puts its own SIGTERM handler in place
    for a flow run, which would end the run as crashed after waiting for every thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    install()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def reset() -> None:
    """Forget a stop request (for a process that goes on after one, such as a test)."""
    _STOP.signum = None
