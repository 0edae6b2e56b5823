"""How fast a link refresh goes against the archive's rates, and how few index requests it makes.

Against a local site farm and the Wayback stand-in: `--sources` sources (1,000) on
`--hosts` hosts, two folders each, each archived already (a capture of its page made
`--age-days` ago, written into the stand-in and the draft: setup, not timed). A share of
them (`--revisit-share`) were captured again since, unchanged: their newest index row is a
revisit, as real index rows often are. Then some pages change (`--changed`, 2 %) and one
refresh is timed with the client and the stand-in both held to `--cdx-rate` index requests
and `--capture-rate` captures a minute (the service's documented 24 and 7 by default), and
the run held to `--deadline` seconds (`archive_run_s`). The least time those rates allow
for the work the refresh did is max(CDX requests / CDX rate, captures / capture rate).

`--redirect-share` (0.33: about a third of real CDX rows are 301/302; energystar.gov/'s
newest row is a 301) is the share of sources whose newest index row is an archived redirect of
their own URL, made after their last capture of the page: a 301 to the `https://` spelling, or
to the same path with a trailing slash, both the same SURT key as the real ones are. Spread
over the sources, so changed pages and revisits have them too. Such a source is no different
for the refresh: unchanged unless its page changed, its link still the page's capture.

Prints one JSON line: sources, wall_s, cdx_requests, cdx_requests_per_source, captures,
limit_s, wall_over_limit, the refresh's counts, and its checks: every changed page captured
once (`changed_not_recaptured`, `recaptured_twice`, target 0), no unchanged one captured
(`unchanged_recaptured`, target 0), none `waiting` (target 0), the share of sources given a
redirect as their newest row (`redirect_share_applied`), those of them unchanged but not
reported so (`redirect_not_unchanged`, target 0), and those whose link is the redirect's
(`redirect_linked`, target 0).

Usage: python bench/refresh.py [--sources 1000] [--hosts 10] [--changed 0.02]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.draft import new_draft
from pipeline.links import refresh
from pipeline.models import ArchiveState, ArchiveStatus, SourceEntry
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store
from pipeline.wayback import snapshot_url

PAGE = "<html><body><h1>Incident {n}</h1><p>{text}</p></body></html>"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S")


def _redirected(n: int, share: float) -> bool:
    """Whether source `n` gets a redirect row: `share` of them, spread evenly over the numbers."""
    return int((n + 1) * share) > int(n * share)


def _same_key(url: str, n: int) -> str:
    """Where an archived redirect of `url` leads without leaving its SURT key, as real ones do:
    the `https://` spelling (the scheme is no part of the key), or the trailing slash added."""
    return url.replace("http://", "https://", 1) if n % 2 else url + "/"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--changed", type=float, default=0.02)
    parser.add_argument("--cdx-rate", type=float, default=24.0, help="index requests a minute (the service's 24)")
    parser.add_argument("--capture-rate", type=float, default=7.0, help="captures a minute (the service's 7)")
    parser.add_argument("--revisit-share", type=float, default=0.2, help="sources whose newest row is a revisit")
    parser.add_argument("--redirect-share", type=float, default=0.33, help="sources whose newest row is a redirect")
    parser.add_argument("--age-days", type=float, default=40.0, help="how old the setup's captures are")
    parser.add_argument("--deadline", type=float, default=1800.0, help="the run's archive_run_s")
    args = parser.parse_args()

    with (
        tempfile.TemporaryDirectory() as tmp,
        SiteFarm() as farm,
        WaybackStandIn(
            WaybackRules(
                access_key="bench-access",
                secret_key="bench-secret",
                captures_per_minute=args.capture_rate,
                cdx_per_minute=args.cdx_rate,
            )
        ) as wayback,
    ):
        root = Path(tmp)
        store = Store(root)
        sites = [farm.add_site(f"h{h}") for h in range(args.hosts)]
        urls = []
        captured_at = datetime.now(UTC) - timedelta(days=args.age_days)
        revisits = int(args.sources * args.revisit_share)
        redirects: dict[str, str] = {}  # by URL: the timestamp of its redirect row
        for n in range(args.sources):
            site = sites[n % args.hosts]
            path = f"/{'incidents' if n % 2 else 'postmortems'}/{n}"
            page = Page.html(PAGE.format(n=n, text=f"The API failed for {n % 60} minutes after a deploy."))
            site.pages[path] = page
            url = site.url(path)
            urls.append((site, path, url))
            stamp = _stamp(captured_at + timedelta(seconds=n))
            wayback.add_capture(url, stamp, page.body)
            if n >= args.sources - revisits:  # captured again since, unchanged: a revisit row is the newest
                wayback.add_capture(url, _stamp(captured_at + timedelta(days=1, seconds=n)), page.body)
            if _redirected(n, args.redirect_share):  # then a redirect of the same key: the newest row is a 3xx
                redirect = _stamp(captured_at + timedelta(days=2, seconds=n))
                wayback.add_capture(url, redirect, b"", statuscode=301, location=_same_key(url, n))
                redirects[url] = redirect
            draft = new_draft(SourceEntry(url=url))
            draft.sources[0].archived = snapshot_url(stamp, url)
            draft.sources[0].archive = ArchiveState(status=ArchiveStatus.CAPTURED, confirmed=True)
            store.write_draft(draft)
        held = {url: len(wayback.captures_of(url)) for _, _, url in urls}

        changed = int(args.sources * args.changed)
        for site, path, _url in urls[:changed]:
            site.pages[path] = Page.html(PAGE.format(n=path, text="Rewritten: the cause was a certificate rotation."))
        settings = Settings(
            root=root,
            allow_private_hosts=True,
            per_host_delay_s=0.0,
            concurrency=16,
            wayback_url=wayback.url,
            wayback_access_key="bench-access",
            wayback_secret_key="bench-secret",
            captures_per_minute=args.capture_rate,
            cdx_per_minute=args.cdx_rate,
            poll_interval_s=0.5,
            reuse_capture_within_s=0,
            archive_run_s=args.deadline,
        )
        start = time.perf_counter()
        report = refresh(store, settings)
        wall = time.perf_counter() - start
        throttled = wayback.counts["429"]
        new = {url: len(wayback.captures_of(url)) - held[url] for _, _, url in urls}
        for url, stamp in redirects.items():
            newest = wayback.captures_of(url)[-1]
            if not new[url] and (newest.timestamp != stamp or newest.statuscode != 301):
                raise SystemExit(f"bench: {url}: the redirect row is not its newest ({newest.timestamp})")

    cdx = report.requests["cdx"]
    captures = report.requests["save"]
    limit = max(cdx / args.cdx_rate, captures / args.capture_rate) * 60.0
    changed_urls = [url for _, _, url in urls[:changed]]
    changed_set = set(changed_urls)
    by_url = {source.url: source for source in report.sources}
    outcomes = [source.outcome for source in report.sources]
    print(
        json.dumps(
            {
                "sources": args.sources,
                "changed": changed,
                "revisit_share": args.revisit_share,
                "redirect_share": args.redirect_share,
                "redirect_share_applied": round(len(redirects) / args.sources, 4),
                "cdx_rate": args.cdx_rate,
                "capture_rate": args.capture_rate,
                "wall_s": round(wall, 2),
                "run_s": round(report.seconds, 2),
                "deadline_s": args.deadline,
                "cdx_requests": cdx,
                "cdx_requests_per_source": round(cdx / args.sources, 4),
                "captures": captures,
                "limit_s": round(limit, 2),
                "wall_over_limit": round(wall / limit, 3) if limit else None,
                "throttled": throttled,
                "archive_out": report.archive_out,
                "changed_not_recaptured": sum(1 for url in changed_urls if new[url] == 0),
                "recaptured_twice": sum(1 for url in changed_urls if new[url] > 1),
                "unchanged_recaptured": sum(1 for _, _, url in urls[changed:] if new[url]),
                "waiting": outcomes.count("waiting"),
                "redirects_changed": sum(1 for url in changed_urls if url in redirects),
                "redirect_not_unchanged": sum(
                    1 for url in redirects if url not in changed_set and by_url[url].outcome != "unchanged"
                ),
                "redirect_linked": sum(1 for url, stamp in redirects.items() if stamp in (by_url[url].archived or "")),
                "counts": report.counts(),
            }
        )
    )


if __name__ == "__main__":
    main()
