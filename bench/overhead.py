"""What Prefect costs: the crawl of local pages through the flow, against the same work called directly.

A site farm runs in a child process, as in bench/crawl.py (`--pages` pages over `--hosts`
hosts, half Markdown and half HTML). Prefect runs as `incidentlib crawl` runs it: a local
server started for this run alone (pipeline.server's `command_server`, the commands' own),
up from before the first flow run to after the last one; its start and a warm-up flow run
on an empty registry are reported as `server_start_s`, not counted in the runs. Then,
alternating, `--repeats` times each, into a fresh data root every time:

- direct: the library's `crawl` over the registry split into the same shares of hosts,
  one thread per share, as the flow's tasks split it, then the duplicate check
  (`flag_duplicates`) on the new and changed drafts, as the flow's `check-duplicates`;
- flow: the `crawl` flow (`archive_new=False`, so both do the same work), its tasks on
  a thread pool.

The run keeps its own deadline (`--deadline`, seconds from the start): the runs go on in a
child process that tells each one as it ends; a pair of runs is not begun when the slowest
pair so far would not end before the deadline, and at the deadline the child is killed (its
server with it). Either way the JSON line is printed, from the runs told (`complete` false,
exit status 2).

Prints one JSON line: pages, hosts, delay_s, repeats (asked) and repeats_done, direct_s
and flow_s (medians), ratio (flow_s / direct_s), flow_runs_s and direct_runs_s (every
run), check_s (median of the direct side's duplicate checks) and check_ms_per_page (that
over the drafts checked: the duplicate check's cost per crawled page), checked (drafts a
check took) and indexed (documents the index took in), tasks (per flow run),
server_start_s, log_level (at INFO every source's line goes to the server too),
deadline_s, elapsed_s, complete, loadavg (/proc/loadavg at the end).

Usage: python bench/overhead.py [--pages 2000] [--hosts 20] [--delay 0] [--repeats 3] [--log-level INFO]
                                [--deadline 1500]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from crawl import crawl_in_shares, register, serve_farm

from pipeline.settings import Settings
from pipeline.store import Store


def direct_run(root: Path, settings: Settings) -> tuple[float, float, dict[str, int], int]:
    """The flow's work called directly: the crawl in shares, then the duplicate check on what it wrote.
    (wall, the check's part of it, the crawl's counts, documents indexed)."""
    from pipeline.duplicates import flag_duplicates

    settings = settings.model_copy(update={"root": root})
    store = Store(root)
    start = time.perf_counter()
    report = crawl_in_shares(store, settings)
    changed = [d for s in report.sources if s.outcome in ("new", "updated") for d in (s.draft_id, *s.parts)]
    checked_at = time.perf_counter()
    checks = flag_duplicates(store, changed) if changed else None
    end = time.perf_counter()
    counts = report.counts()
    counts["checked"] = len(checks.checked) if checks else 0
    return end - start, end - checked_at, counts, len(checks.indexed) if checks else 0


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.0, help="per-host delay between request starts, seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--log-level", default="WARNING", help="Prefect's: WARNING as the commands run by default, INFO as `serve` runs"
    )
    parser.add_argument("--deadline", type=float, default=1500.0, help="seconds: the JSON line is printed by then")
    args = parser.parse_args()
    began = time.perf_counter()

    direct_runs: list[float] = []
    flow_runs: list[float] = []
    checks: list[float] = []
    figures: dict[str, Any] = {"checked": 0, "indexed": 0, "server_start_s": None}

    def report(complete: bool) -> None:
        """The JSON line, from the runs done."""
        direct_s = statistics.median(direct_runs) if direct_runs else None
        flow_s = statistics.median(flow_runs) if flow_runs else None
        check_s = statistics.median(checks) if checks else None
        line = {
            "pages": args.pages,
            "hosts": args.hosts,
            "delay_s": args.delay,
            "repeats": args.repeats,
            "repeats_done": min(len(direct_runs), len(flow_runs)),
            "direct_s": round(direct_s, 2) if direct_s else None,
            "flow_s": round(flow_s, 2) if flow_s else None,
            "ratio": round(flow_s / direct_s, 3) if direct_s and flow_s else None,
            "direct_runs_s": [round(w, 2) for w in direct_runs],
            "flow_runs_s": [round(w, 2) for w in flow_runs],
            "check_s": round(check_s, 2) if check_s is not None else None,
            "check_ms_per_page": round(1000 * check_s / figures["checked"], 2)
            if check_s is not None and figures["checked"]
            else None,
            "checked": figures["checked"],
            "indexed": figures["indexed"],
            "tasks": figures.get("tasks"),
            "server_start_s": figures["server_start_s"],
            "log_level": args.log_level,
            "deadline_s": args.deadline,
            "elapsed_s": round(time.perf_counter() - began, 1),
            "complete": complete,
            "loadavg": loadavg(),
        }
        print(json.dumps(line), flush=True)

    parent, child = multiprocessing.Pipe()
    farm = multiprocessing.Process(target=serve_farm, args=(args.hosts, args.pages, child), daemon=True)
    farm.start()
    tmp = tempfile.mkdtemp(prefix="incidentlib-overhead-")
    complete = False
    try:
        urls, _ = parent.recv()
        # The runs in a child process, told back one by one: at the deadline it is killed (its Prefect
        # server watches it and stops too) and the line printed from what it told.
        told, telling = multiprocessing.Pipe(duplex=False)
        runs = multiprocessing.Process(target=measure, args=(args, Path(tmp), urls, began, telling), daemon=True)
        runs.start()
        telling.close()
        while True:
            left = args.deadline - (time.perf_counter() - began)
            if left <= 0 or not told.poll(left):
                break
            try:
                what, *values = told.recv()
            except EOFError:  # the runs died: the figures so far
                break
            if what == "direct":
                direct_runs.append(values[0])
                checks.append(values[1])
                figures["checked"], figures["indexed"] = values[2], values[3]
            elif what == "flow":
                flow_runs.append(values[0])
            elif what == "server":
                figures["server_start_s"], figures["tasks"] = values
            elif what == "done":
                complete = values[0]
                break
        runs.join(timeout=max(0.0, min(30.0, args.deadline - (time.perf_counter() - began))))
        if runs.is_alive():
            runs.kill()
            runs.join()
    finally:
        parent.send("stop")
        farm.join(timeout=10)
        if farm.is_alive():
            farm.kill()
        _remove(Path(tmp))
    report(complete)
    if not complete:
        sys.exit(2)


def _remove(folder: Path, tries: int = 10) -> None:
    """The run's folder gone, once a killed run's server has stopped writing into it."""
    for _ in range(tries):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        time.sleep(0.5)


def measure(args: argparse.Namespace, tmp: Path, urls: list[str], began: float, telling: Any) -> None:
    """The runs, alternating, each told on `telling` (a Connection) as it ends; then ("done", complete):
    False when the deadline left no time for them all."""
    from pipeline.server import command_server

    os.environ.update(
        {
            "INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "1",
            "INCIDENTLIB_PER_HOST_DELAY_S": str(args.delay),
            "INCIDENTLIB_MAX_RETRIES": "1",
            "PREFECT_LOGGING_LEVEL": args.log_level,
        }
    )
    settings = Settings()
    warm = tmp / "warm-up"
    (warm / "sources").mkdir(parents=True)
    start = time.perf_counter()
    complete = True
    # The server the commands start for themselves, held for the whole run: up before the first flow
    # run, stopped after the last (Prefect's own temporary server may stop while a long flow still runs).
    with command_server(Store(warm), settings.model_copy(update={"root": warm})):
        from pipeline.crawl import CrawlRun
        from pipeline.flows import crawl_flow_for, run
        from pipeline.prefect_env import flush_to_server

        flow = crawl_flow_for(settings)
        flow(root=str(warm), archive_new=False)
        telling.send(("server", round(time.perf_counter() - start, 2), settings.crawl_task_groups))
        slowest = 0.0
        try:
            for n in range(args.repeats):
                if time.perf_counter() - began + slowest > args.deadline:
                    complete = False
                    break
                pair = time.perf_counter()
                root = tmp / f"direct-{n}"
                register(root, urls)
                wall, check, counts, indexed = direct_run(root, settings)
                assert counts["new"] == args.pages, counts
                telling.send(("direct", wall, check, counts["checked"], indexed))

                root = tmp / f"flow-{n}"
                register(root, urls)
                start = time.perf_counter()
                crawled = run(flow, CrawlRun, root=str(root), archive_new=False)
                wall = time.perf_counter() - start
                assert crawled.counts()["new"] == args.pages, crawled.counts()
                assert crawled.duplicates is not None and len(crawled.duplicates.checked) == counts["checked"]
                telling.send(("flow", wall))
                slowest = max(slowest, time.perf_counter() - pair)
        finally:
            flush_to_server()
    telling.send(("done", complete))


if __name__ == "__main__":
    main()
