"""How fast the crawl goes against its own politeness, on a farm of local sites.

A site farm runs in a child process (so its threads take no time from the crawler):
`--hosts` sites on loopback ports, each with its own latency, serving `--pages` pages
in all, half Markdown and half HTML. Then, side by side in one run:

1. the crawl as the flow runs it, without Prefect: the registry split into shares of
   whole hosts, each share crawled in a thread of its own with its part of the global
   concurrency (per-host politeness: one request at a time to a host, starts
   `--delay` seconds apart);
2. a re-crawl with nothing changed (every page answers 304: no body, no write);
3. the same crawl done naively, one page at a time, into a fresh data root.

The politeness limit is the least time any polite crawler needs: the busiest host's
requests, robots.txt included, one after another, each taking the longer of the delay
and the host's latency. Prints one JSON line:

    pages, hosts, delay_s, wall_s, pages_per_s, politeness_limit_s, politeness_ratio,
    naive_s, naive_ratio (naive wall time over the pipeline's), recrawl_s,
    recrawl_bodies, recrawl_writes, peak_rss_mb (of the crawling process, after the
    first crawl)

Usage: python bench/crawl.py [--pages 2000] [--hosts 20] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pipeline.crawl import CrawlReport, crawl, plan_crawl
from pipeline.settings import Settings
from pipeline.store import Store

MARKDOWN = """# Incident {n}: queue backlog on {host}

## Summary

On 12 May 2024 the job queue on {host} stopped draining for {minutes} minutes after a deploy
changed the worker pool size. Requests piled up and the API answered 503 for a share of calls.

## Timeline

- 10:02 deploy started
- 10:05 backlog alert fired
- 10:{minutes:02d} workers restored

## Root cause

The new configuration set the worker pool to zero on one node class.

## Action items

- Validate pool sizes in CI.
- Alert on queue age, not only queue length.
"""

HTML = """<html><head><title>Outage {n} | {host} engineering</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Outage {n}</h1>
<p>On 3 June 2024 the load balancers on {host} dropped connections for {minutes} minutes while
a certificate rotation ran. Clients saw TLS handshake failures and retried, which doubled the load.</p>
<h2>Impact</h2><p>About {minutes} percent of requests failed during the window.</p>
<h2>Resolution</h2><p>The previous certificate bundle was restored and the rotation job paused.</p>
<h2>Lessons learned</h2><p>Rotations need a canary host before the fleet.</p>
</article><footer>Copyright {host}</footer></body></html>
"""


def serve_farm(hosts: int, pages: int, connection) -> None:  # a multiprocessing Connection
    """The child process: start the farm, send its page URLs and latencies, serve until told to stop."""
    from pipeline.standins.sitefarm import Page, SiteFarm

    with SiteFarm() as farm:
        urls, latencies = [], {}
        for h in range(hosts):
            latency = 0.005 + 0.015 * (h % 4) / 3  # 5 to 20 ms
            site = farm.add_site(f"h{h}", latency_s=latency)
            latencies[f"127.0.0.1:{site.port}"] = latency
        for n in range(pages):
            site = farm.sites[f"h{n % hosts}"]
            values = {"n": n, "host": site.name, "minutes": 10 + n % 40}
            if n % 2:
                site.pages[f"/pm/{n}.md"] = Page.markdown(MARKDOWN.format(**values))
                urls.append(site.url(f"/pm/{n}.md"))
            else:
                site.pages[f"/posts/{n}/"] = Page.html(HTML.format(**values))
                urls.append(site.url(f"/posts/{n}/"))
        connection.send((urls, latencies))
        connection.recv()  # until the bench is done


def register(root: Path, urls: list[str]) -> None:
    (root / "sources").mkdir(parents=True, exist_ok=True)
    (root / "sources" / "bench.yaml").write_text("".join(f"- url: {u}\n  org: Bench\n" for u in urls))


def crawl_in_shares(store: Store, settings: Settings) -> CrawlReport:
    """The crawl as the flow's tasks split it: the registry in shares of whole hosts, one thread a share."""
    plan = plan_crawl(store, settings)
    with ThreadPoolExecutor(len(plan.shares)) as pool:
        reports = list(pool.map(lambda g: crawl(store, settings, g, concurrency=plan.concurrency), plan.shares))
    report = CrawlReport()
    for part in reports:
        report = report.merge(part)
    return report


def timed_crawl(root: Path, settings: Settings, *, shares: bool = True) -> tuple[float, dict]:
    settings = settings.model_copy(update={"root": root})
    store = Store(root)
    start = time.perf_counter()
    report = crawl_in_shares(store, settings) if shares else crawl(store, settings)
    return time.perf_counter() - start, {**report.counts(), "bodies": report.bodies, "writes": report.writes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.2, help="per-host delay between request starts, seconds")
    args = parser.parse_args()

    parent, child = multiprocessing.Pipe()
    farm = multiprocessing.Process(target=serve_farm, args=(args.hosts, args.pages, child), daemon=True)
    farm.start()
    urls, latencies = parent.recv()
    settings = Settings(allow_private_hosts=True, per_host_delay_s=args.delay, max_retries=1)
    per_host = args.pages / args.hosts + 1  # robots.txt too
    limit = max(per_host * max(args.delay, latency) for latency in latencies.values())

    try:
        with tempfile.TemporaryDirectory() as tmp:
            polite_root, naive_root = Path(tmp) / "polite", Path(tmp) / "naive"
            register(polite_root, urls)
            register(naive_root, urls)
            wall, first = timed_crawl(polite_root, settings)
            peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            recrawl_wall, again = timed_crawl(polite_root, settings)
            # Naive: one page at a time (the politeness delay still applies, per host).
            naive_wall, naive = timed_crawl(naive_root, settings.model_copy(update={"concurrency": 1}), shares=False)
    finally:
        parent.send("stop")
        farm.join(timeout=30)

    assert first["new"] == args.pages, first
    assert naive["new"] == args.pages, naive
    print(
        json.dumps(
            {
                "pages": args.pages,
                "hosts": args.hosts,
                "delay_s": args.delay,
                "wall_s": round(wall, 2),
                "pages_per_s": round(args.pages / wall, 1),
                "politeness_limit_s": round(limit, 2),
                "politeness_ratio": round(wall / limit, 3),
                "naive_s": round(naive_wall, 2),
                "naive_ratio": round(naive_wall / wall, 2),
                "recrawl_s": round(recrawl_wall, 2),
                "recrawl_bodies": again["bodies"],
                "recrawl_writes": again["writes"],
                "peak_rss_mb": round(peak_rss_mb, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
