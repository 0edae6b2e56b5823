"""What Prefect costs: the crawl of local pages through the flow, against the same work called directly.

A site farm runs in a child process, as in bench/crawl.py (`--pages` pages over `--hosts`
hosts, half Markdown and half HTML). Prefect runs as `incidentlib crawl` runs it: the
temporary local server, started once by a warm-up flow run on an empty registry (its
start is reported as `server_start_s`, not counted in the runs). Then, alternating,
`--repeats` times each, into a fresh data root every time:

- direct: the library's `crawl` over the registry split into the same shares of hosts,
  one thread per share, as the flow's tasks split it, then the duplicate check
  (`flag_duplicates`) on the drafts it wrote, as the flow's `check-duplicates` task runs it;
- flow: the `crawl` flow (`archive_new=False`, so both do the same work), its tasks on
  a thread pool.

The farm's pages are near-copies of two templates, the duplicate check's worst case: every new
draft meets hundreds of copies, of which it compares a bounded number
(`pipeline.similar.index.MAX_TEXT_CANDIDATES`) and keeps five.

Prints one JSON line: pages, hosts, delay_s, repeats, direct_s and flow_s (medians),
ratio (flow_s / direct_s), flow_runs_s and direct_runs_s (every run), duplicates_ms_per_page
(the direct side's check, median over its runs, per crawled page), tasks (per flow run),
server_start_s, log_level (at INFO every source's line goes to the server too), deadline_s,
complete (false when the deadline stopped the runs early: the medians are of the runs done),
load_average (the machine's 1-minute load as the runs ended).

Usage: python bench/overhead.py [--pages 2000] [--hosts 20] [--delay 0] [--repeats 3] [--log-level INFO]
       [--deadline 540]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path

from crawl import register, serve_farm, timed_crawl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.0, help="per-host delay between request starts, seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--deadline",
        type=float,
        default=540.0,
        help="seconds: no repeat starts that would end past it, at the pace of those before",
    )
    parser.add_argument(
        "--log-level", default="WARNING", help="Prefect's: WARNING as the commands run by default, INFO as `serve` runs"
    )
    args = parser.parse_args()

    parent, child = multiprocessing.Pipe()
    farm = multiprocessing.Process(target=serve_farm, args=(args.hosts, args.pages, child), daemon=True)
    farm.start()
    urls, _ = parent.recv()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "1",
                "INCIDENTLIB_PER_HOST_DELAY_S": str(args.delay),
                "INCIDENTLIB_MAX_RETRIES": "1",
                "PREFECT_HOME": str(Path(tmp) / "prefect"),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                "DO_NOT_TRACK": "1",
                "PREFECT_LOGGING_LEVEL": args.log_level,
            }
        )
        from pipeline.crawl import CrawlRun
        from pipeline.flows import crawl_flow_for, run
        from pipeline.settings import Settings

        settings = Settings()
        flow = crawl_flow_for(settings)
        warm = Path(tmp) / "warm-up"
        (warm / "sources").mkdir(parents=True)
        start = time.perf_counter()
        flow(root=str(warm), archive_new=False)
        server_start_s = time.perf_counter() - start

        from pipeline.duplicates import flag_duplicates
        from pipeline.store import Store

        direct_runs, flow_runs, check_runs = [], [], []
        began = time.perf_counter()
        complete = True
        try:
            for n in range(args.repeats):
                spent = time.perf_counter() - began
                pace = spent / n if n else 0.0
                if n and spent + pace > args.deadline:
                    complete = False  # the next pair of runs would end past the deadline
                    break
                root = Path(tmp) / f"direct-{n}"
                register(root, urls)
                wall, counts = timed_crawl(root, settings)
                assert counts["new"] == args.pages, counts
                start = time.perf_counter()
                flag_duplicates(Store(root), Store(root).ids("draft"))  # what the flow's check-duplicates does
                checked = time.perf_counter() - start
                check_runs.append(checked)
                direct_runs.append(wall + checked)

                root = Path(tmp) / f"flow-{n}"
                register(root, urls)
                start = time.perf_counter()
                crawled = run(flow, CrawlRun, root=str(root), archive_new=False)
                flow_runs.append(time.perf_counter() - start)
                assert crawled.counts()["new"] == args.pages, crawled.counts()
                assert crawled.duplicates is not None and not crawled.duplicates.unreadable, "the check ran whole"
                assert len(crawled.duplicates.checked) == args.pages, crawled.duplicates.counts()
        finally:
            parent.send("stop")
            farm.join(timeout=30)

    direct_s, flow_s = statistics.median(direct_runs), statistics.median(flow_runs)
    print(
        json.dumps(
            {
                "pages": args.pages,
                "hosts": args.hosts,
                "delay_s": args.delay,
                "repeats": args.repeats,
                "direct_s": round(direct_s, 2),
                "flow_s": round(flow_s, 2),
                "ratio": round(flow_s / direct_s, 3),
                "direct_runs_s": [round(w, 2) for w in direct_runs],
                "flow_runs_s": [round(w, 2) for w in flow_runs],
                "duplicates_ms_per_page": round(statistics.median(check_runs) / args.pages * 1000, 2),
                "tasks": settings.crawl_task_groups,
                "server_start_s": round(server_start_s, 2),
                "log_level": args.log_level,
                "deadline_s": args.deadline,
                "complete": complete,
                "load_average": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
