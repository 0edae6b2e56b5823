"""How fast a link refresh goes against the archive's rates, and how few index requests it makes.

Against a local site farm and the Wayback stand-in: `--sources` sources (1,000) on
`--hosts` hosts, two folders each, all archived first (setup, not timed). Then some pages
change (`--changed`, 2 %) and one refresh is timed with the client held to
`--cdx-rate` index requests and `--capture-rate` captures a minute (the stand-in
allows the same). The least time those rates allow for the work the refresh did is
max(CDX requests / CDX rate, captures / capture rate).

Prints one JSON line: sources, wall_s, cdx_requests, cdx_requests_per_source, captures,
limit_s, wall_over_limit, and the refresh's counts.

Usage: python bench/refresh.py [--sources 1000] [--hosts 10] [--changed 0.02]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from pipeline.archive import archive
from pipeline.draft import new_draft
from pipeline.links import refresh
from pipeline.models import SourceEntry
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store

PAGE = "<html><body><h1>Incident {n}</h1><p>{text}</p></body></html>"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--changed", type=float, default=0.02)
    parser.add_argument("--cdx-rate", type=float, default=60.0)
    parser.add_argument("--capture-rate", type=float, default=120.0)
    args = parser.parse_args()

    with (
        tempfile.TemporaryDirectory() as tmp,
        SiteFarm() as farm,
        WaybackStandIn(
            access_key="bench-access",
            secret_key="bench-secret",
            captures_per_minute=100_000,
            cdx_per_minute=100_000,
            sessions=20,
        ) as wayback,
    ):
        root = Path(tmp)
        store = Store(root)
        sites = [farm.add_site(f"h{h}") for h in range(args.hosts)]
        urls = []
        for n in range(args.sources):
            site = sites[n % args.hosts]
            path = f"/{'incidents' if n % 2 else 'postmortems'}/{n}"
            site.pages[path] = Page.html(PAGE.format(n=n, text=f"The API failed for {n % 60} minutes after a deploy."))
            urls.append((site, path))
            store.write_draft(new_draft(SourceEntry(url=site.url(path))))
        common: dict[str, Any] = {
            "root": root,
            "allow_private_hosts": True,
            "per_host_delay_s": 0.0,
            "concurrency": 16,
            "wayback_url": wayback.url,
            "wayback_access_key": "bench-access",
            "wayback_secret_key": "bench-secret",
            "poll_interval_s": 0.02,
            "status_polls_per_minute": 100_000,  # the stand-in sets no limit on looks at jobs
            "reuse_capture_within_s": 0,
            "capture_sessions": 20,
        }
        archive(store, Settings(**common, captures_per_minute=100_000, cdx_per_minute=100_000))

        changed = int(args.sources * args.changed)
        for site, path in urls[:changed]:
            site.pages[path] = Page.html(PAGE.format(n=path, text="Rewritten: the cause was a certificate rotation."))
        wayback.set_limits(args.capture_rate, args.cdx_rate)
        settings = Settings(**common, captures_per_minute=args.capture_rate, cdx_per_minute=args.cdx_rate)
        start = time.perf_counter()
        report = refresh(store, settings)
        wall = time.perf_counter() - start
        throttled = wayback.counts["429"]

    cdx = report.requests["cdx"]
    captures = report.requests["save"]
    limit = max(cdx / args.cdx_rate, captures / args.capture_rate) * 60.0
    print(
        json.dumps(
            {
                "sources": args.sources,
                "changed": changed,
                "wall_s": round(wall, 2),
                "cdx_requests": cdx,
                "cdx_requests_per_source": round(cdx / args.sources, 4),
                "captures": captures,
                "limit_s": round(limit, 2),
                "wall_over_limit": round(wall / limit, 3) if limit else None,
                "throttled": throttled,
                "counts": report.counts(),
            }
        )
    )


if __name__ == "__main__":
    main()
