"""Processes that must not outlive the process that started them: the Prefect server a
command or `serve` starts (pipeline.server_process), and each flow run a `serve` starts.

A SIGKILLed parent runs no code of its own, so the child watches it:

- a thread polls the parent's pid every half second; once the child has been handed to
  another parent (init, or a subreaper), the parent is gone. The child then sends itself
  SIGTERM, its own graceful stop (uvicorn's; interrupt's for a flow run), and exits at once
  three seconds later whatever that stop is waiting for (a server that is gone too);
- optionally, the kernel is asked for SIGTERM when the parent dies (Linux's
  PR_SET_PDEATHSIG). That is sooner, but it follows the *thread* that started the child:
  only for a child started from a thread that lives as long as its process (the server,
  started from the main thread). Prefect's runner starts flow runs from wherever its event
  loop runs, so a flow run relies on the thread alone, armed as soon as its flows are loaded
  (follow_serve).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

__all__ = ["SERVE_ENV", "die_with_parent", "follow_serve", "watch_parent"]

# Set by `serve` for the flow runs it starts (Prefect's runner hands its environment down).
SERVE_ENV = "INCIDENTLIB_SERVE_PID"
_PR_SET_PDEATHSIG = 1
_watched = False


def watch_parent(parent: int, *, kernel: bool = False, grace_s: float = 3.0) -> None:
    """Stop this process when `parent` is no longer its parent (see the module); exit at once if
    it already is not. Once per process: a second call does nothing."""
    global _watched
    if _watched:
        return
    _watched = True
    if kernel:
        _ask_the_kernel(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the watch was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)  # a parent's death wakes nothing here: polling is the only way
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace_s)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _ask_the_kernel(sig: int) -> None:
    """Linux: `sig` to this process when the thread that started it ends (PR_SET_PDEATHSIG)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)


def die_with_parent(parent: int) -> None:
    """A process forked from `parent`'s only thread (a site build's worker): killed by the kernel the
    moment its parent dies (Linux), mid-write or not, so that it never writes into a folder the next
    build owns; exit at once if the parent is gone already."""
    _ask_the_kernel(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(4)


def follow_serve(*, early: bool = False) -> None:
    """In a flow run a `serve` started, stop it when that `serve` is gone (killed with SIGKILL:
    otherwise it stops its runs itself), so that the next `serve` finds no run of the last one
    still crawling; anywhere else, nothing.

    Called twice in such a run. `early`, when Prefect's engine loads the flows, before it
    marks the run as running: from there on the engine talks to a server that goes with the
    `serve`, and its client retries a refused connection for a minute or more, so a watch
    armed only in the flow's body could come too late. Early, the watch is armed only when
    this process's parent is that `serve`: a process the run itself started inherits the
    environment, and a `serve` gone already is the body's to find. Then in the flow's body,
    where a `serve` gone already ends the run before any work.
    """
    serve = os.environ.get(SERVE_ENV)
    if not (serve and os.environ.get("PREFECT__FLOW_RUN_ID")):
        return
    if early and os.getppid() != int(serve):
        return
    watch_parent(int(serve))
