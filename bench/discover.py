"""How fast discover reads its feeds against its own politeness, and what a second run costs.

A site farm runs in a child process, as in bench/crawl.py (so its threads take no time from
discover): `--hosts` hosts (10), each serving `--feeds` / `--hosts` Atom feeds (100 in all) of
`--entries` entries (200), newest first; one entry in `--every` (10) has "outage" in its title,
which each feed's `include` filter takes, so a first run proposes feeds * entries / every
candidates (2,000). Then `--runs` times (3), side by side in this one process, into a fresh data
root each time:

1. discover as the command runs it, without Prefect, on a data root with only feeds.yaml;
2. discover again with nothing changed: every feed is asked with its validators and answers 304.

The politeness floor is the least time the per-host delay allows: a host's requests (its feeds
and robots.txt) go one at a time, their starts `--delay` apart, so a run takes at least
(requests per host - 1) * max(delay, latency) + latency. Prints one JSON line, wall times the
medians of the runs (every run's in `*_runs_s`):

    feeds, entries_per_feed, hosts, delay_s, runs, politeness_floor_s,
    first_wall_s, first_ratio (over the floor), first_cpu_s (this process's, every thread's: the
    feeds' parsing is most of it), feeds_read, new_candidates, candidates_written,
    first_bytes_read, first_requests,
    second_wall_s, second_ratio, second_cpu_s, second_not_modified, second_bytes_read (must be 0),
    second_candidates_written (0), second_writes (0: candidates, registry, drafts),
    second_files_changed (0: files of the data root outside .incidentlib changed or added),
    second_state_files_changed (the files of .incidentlib rewritten: feeds.json, each feed's checked_at),
    first_runs_s, second_runs_s, peak_rss_mb

Usage: python bench/discover.py [--runs 3] [--feeds 100] [--entries 200] [--hosts 10] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from pipeline.discover import DiscoverReport, discover
from pipeline.settings import Settings
from pipeline.store import Store


def atom(base: str, feed: int, entries: int, every: int) -> bytes:
    """One Atom feed of `entries` entries, newest first; one in `every` tells of an outage."""
    newest = datetime(2026, 3, 1, tzinfo=UTC)
    parts = [
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>Engineering blog {feed}</title><id>{base}/feed-{feed}.atom</id>"
        f"<updated>{newest:%Y-%m-%dT%H:%M:%SZ}</updated>\n"
    ]
    for n in range(entries):
        url = f"{base}/blog/{feed}/posts/{n}"
        when = newest - timedelta(hours=6 * n)
        if n % every == 0:
            title = f"Postmortem: the {n // every}th outage of the queue service"
            summary = "The job queue stopped draining for 40 minutes after a deploy set the worker pool to zero."
        else:
            title = f"Release notes for version {feed}.{n}"
            summary = "Faster builds, a new dashboard and the usual fixes."
        parts.append(
            f'<entry><id>{url}</id><title>{escape(title)}</title><link href="{url}"/>'
            f"<updated>{when:%Y-%m-%dT%H:%M:%SZ}</updated><summary>{escape(summary)}</summary></entry>\n"
        )
    parts.append("</feed>\n")
    return "".join(parts).encode("utf-8")


@dataclass(frozen=True)
class Farm:
    """The farm's shape: `hosts` hosts serving `feeds` Atom feeds of `entries` entries, one in `every`
    an outage, each request answered `latency` seconds late."""

    hosts: int
    feeds: int
    entries: int
    every: int
    latency: float


def serve_farm(shape: Farm, connection: Any) -> None:
    """The child process: start the farm, send its feed URLs, serve until told to stop."""
    from pipeline.standins.sitefarm import Page, SiteFarm

    with SiteFarm() as farm:
        sites = [farm.add_site(f"h{h}", latency_s=shape.latency) for h in range(shape.hosts)]
        urls = []
        for feed in range(shape.feeds):
            site = sites[feed % shape.hosts]
            body = atom(site.url("").rstrip("/"), feed, shape.entries, shape.every)
            site.pages[f"/feed-{feed}.atom"] = Page(body, content_type="application/atom+xml")
            urls.append(site.url(f"/feed-{feed}.atom"))
        connection.send(urls)
        connection.recv()  # until the bench is done


def files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file of the data root and its (mtime_ns, size)."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file() and "locks" not in path.relative_to(root).parts:
            stat = path.stat()
            found[str(path.relative_to(root))] = (stat.st_mtime_ns, stat.st_size)
    return found


def changed(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(name for name, seen in after.items() if before.get(name) != seen)


def timed(store: Store, settings: Settings) -> tuple[float, float, DiscoverReport]:
    """discover's wall time, the CPU time of this process meanwhile (every thread's), and its report."""
    start, cpu = time.perf_counter(), time.process_time()
    report = discover(store, settings)
    return time.perf_counter() - start, time.process_time() - cpu, report


def one_run(root: Path, urls: list[str], settings: Settings) -> dict[str, Any]:
    """discover twice into a fresh data root: the first reading, and one with nothing changed."""
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "feeds.yaml").write_text(
        "".join(f"- url: {url}\n  kind: atom\n  org: Bench\n  include: [outage]\n" for url in urls), encoding="utf-8"
    )
    store = Store(root)
    settings = settings.model_copy(update={"root": root})
    first_s, first_cpu_s, first = timed(store, settings)
    before = files(root)
    time.sleep(0.01)  # a rewrite within the same clock tick would keep its mtime
    second_s, second_cpu_s, second = timed(store, settings)
    touched = changed(before, files(root))
    return {
        "first_s": first_s,
        "first_cpu_s": first_cpu_s,
        "second_s": second_s,
        "second_cpu_s": second_cpu_s,
        "first": first,
        "second": second,
        "files_changed": [name for name in touched if not name.startswith(".incidentlib/")],
        "state_files_changed": [name for name in touched if name.startswith(".incidentlib/")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs (each a first and a second discover) for medians")
    parser.add_argument("--feeds", type=int, default=100)
    parser.add_argument("--entries", type=int, default=200, help="entries of each feed")
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--every", type=int, default=10, help="one entry in this many matches the include filter")
    parser.add_argument("--delay", type=float, default=0.05, help="per-host delay between request starts, seconds")
    parser.add_argument("--latency", type=float, default=0.0, help="each farm request's latency, seconds")
    args = parser.parse_args()

    parent, child = multiprocessing.Pipe()
    farm = multiprocessing.Process(
        target=serve_farm,
        args=(Farm(args.hosts, args.feeds, args.entries, args.every, args.latency), child),
        daemon=True,
    )
    farm.start()
    urls = parent.recv()
    settings = Settings(allow_private_hosts=True, per_host_delay_s=args.delay, max_retries=1)
    per_host = -(-args.feeds // args.hosts) + 1  # the busiest host's feeds, and robots.txt
    floor = (per_host - 1) * max(args.delay, args.latency) + args.latency
    expected = args.feeds * -(-args.entries // args.every)

    runs = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in range(args.runs):
                runs.append(one_run(Path(tmp) / f"run-{n}", urls, settings))
    finally:
        parent.send("stop")
        farm.join(timeout=30)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    for run in runs:
        first, second = run["first"], run["second"]
        assert first.counts()["read"] == args.feeds and first.counts()["candidates"] == expected, first.counts()
        assert second.counts()["not_modified"] == args.feeds, second.counts()
    first_s = statistics.median(r["first_s"] for r in runs)
    second_s = statistics.median(r["second_s"] for r in runs)
    first, second = runs[-1]["first"], runs[-1]["second"]
    print(
        json.dumps(
            {
                "feeds": args.feeds,
                "entries_per_feed": args.entries,
                "hosts": args.hosts,
                "delay_s": args.delay,
                "runs": args.runs,
                "politeness_floor_s": round(floor, 3),
                "first_wall_s": round(first_s, 3),
                "first_ratio": round(first_s / floor, 2) if floor else None,
                "first_cpu_s": round(statistics.median(r["first_cpu_s"] for r in runs), 3),
                "feeds_read": first.counts()["read"],
                "new_candidates": first.counts()["candidates"],
                "candidates_written": first.candidates_written,
                "first_bytes_read": first.bytes_read,
                "first_requests": first.requests,
                "second_wall_s": round(second_s, 3),
                "second_ratio": round(second_s / floor, 2) if floor else None,
                "second_cpu_s": round(statistics.median(r["second_cpu_s"] for r in runs), 3),
                "second_not_modified": second.counts()["not_modified"],
                "second_bytes_read": max(r["second"].bytes_read for r in runs),
                "second_candidates_written": max(r["second"].candidates_written for r in runs),
                "second_writes": max(r["second"].writes for r in runs),
                "second_files_changed": max(len(r["files_changed"]) for r in runs),
                "second_state_files_changed": sorted({f for r in runs for f in r["state_files_changed"]}),
                "first_runs_s": [round(r["first_s"], 3) for r in runs],
                "second_runs_s": [round(r["second_s"], 3) for r in runs],
                "peak_rss_mb": round(peak_rss_mb, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
