"""Stopping on a signal: a stop asked for once, obeyed by in-flight work in any thread.

    signal_handlers()                  # a command that runs flows, and each flow body
    report = interrupt.run(coro)       # instead of asyncio.run, in the library
    interrupt.check()                  # between items of synchronous work

A first SIGTERM or SIGINT asks every running piece of work to stop: each coroutine run
through `run` is cancelled in its own thread's event loop, so a crawl, an archive run or
a refresh ends within seconds, whatever it was waiting for. What was being written is
written whole or not at all (writes are atomic), and what was not reached waits for the
next run. A second signal exits at once.

Outside cooperative work (no flow running), the first signal raises `Interrupted` in the
main thread, as Ctrl-C raises KeyboardInterrupt. The command line turns it into the exit
status a shell expects: 128 plus the signal's number (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

__all__ = ["Interrupted", "check", "cooperating", "install", "requested", "reset", "run", "signal_handlers"]

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


class _Stop:
    def __init__(self) -> None:
        self.signum: int | None = None
        self.event = threading.Event()
        self._lock = threading.Lock()
        self._running: set[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = set()
        self.cooperating = 0  # how many pieces of work obey a stop request without being raised at

    def request(self, signum: int) -> None:
        with self._lock:
            self.signum = signum
            self.event.set()
            running = list(self._running)
        for loop, task in running:
            loop.call_soon_threadsafe(task.cancel)

    def enter(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        with self._lock:
            if self.event.is_set():
                raise Interrupted(self.signum or signal.SIGTERM)
            self._running.add((loop, task))

    def leave(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        with self._lock:
            self._running.discard((loop, task))


_STOP = _Stop()


def requested() -> int | None:
    """The signal that asked to stop, or None."""
    return _STOP.signum


def check() -> None:
    """Raise Interrupted when a stop was asked for: call it between items of synchronous work."""
    if _STOP.signum is not None:
        raise Interrupted(_STOP.signum)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, cancelled when a stop is asked for; raises Interrupted then."""

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
        try:
            return asyncio.run(main())
        except asyncio.CancelledError:
            if _STOP.signum is None:
                raise
            raise Interrupted(_STOP.signum) from None


@contextmanager
def cooperating() -> Iterator[None]:
    """While inside, a first signal is a request that the work obeys, not an exception raised at it."""
    with _STOP._lock:
        _STOP.cooperating += 1
    try:
        yield
    finally:
        with _STOP._lock:
            _STOP.cooperating -= 1


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _STOP.event.is_set():
        os._exit(128 + signum)  # a second signal: out at once (a server we started watches us)
    _STOP.request(signum)
    if _STOP.cooperating == 0 and threading.current_thread() is threading.main_thread():
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
    with _STOP._lock:
        _STOP.signum = None
        _STOP.event.clear()
