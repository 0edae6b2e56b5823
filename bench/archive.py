"""How close archiving runs to the archive's allowed rate, and what survives its failures.

Against the local Wayback stand-in (captures fetched for real from a local site farm),
side by side in one run:

1. `--sources` sources (1,000), the stand-in and the client both set to `--rate` captures
   a minute: the captures a minute achieved over the rate allowed (`rate_ratio`,
   target >= 0.9), the 429s the client provoked (`throttled`, target 0), sources not
   captured (`rate_lost`, target 0) and captures the stand-in holds twice
   (`rate_duplicated`, target 0: every source captured exactly once);
2. the same number of new sources with every failure switch of the stand-in on (429
   storms, a 5xx after a capture, errors inside 200, expired jobs, session limits,
   captures late into the index, permanent errors for a few URLs), runs repeated until
   nothing is left to do: sources neither captured nor failed with a permanent reason
   (`lost`, target 0) and sources the archive holds two captures of (`duplicated`,
   target 0).
3. the service as hard as it gets for one account, at its own rate (`--hard-rate`, 7 a
   minute): one capture session, jobs of 2 to 6 s, an outage of `--outage` (60 s) from
   `--outage-after` (20 s), a burst of 429s; a run the outage stops is followed by the
   next when the service is back, as the schedule would: sources failed for the
   service's or the account's trouble (`failed_for_service_reasons`, target 0: only a
   source's own answer may fail it), `hard_lost` and `hard_duplicated` (0), submits that
   started no job (`hard_refused_submits`), and captures a minute against the rate
   allowed over the runs that met no outage (`hard_rate_ratio_up`, target >= 0.9) and
   over the whole scenario less the outage (`hard_rate_ratio_overall`: it also counts the
   pauses the 429 burst asks for, 15.5 s, and a run's polls cut short by the outage).

The stand-in drops connections as the service does under load: a share of every scenario's
answers (`--drop-share`, 2 %) are cut off mid-way (`dropped`, `fail_dropped`, `hard_dropped`);
none may stop a run.

The benchmark has a deadline of its own (`--deadline`, 900 s), shared out between the
scenarios (the rate scenario may run until 35 % of it, the failure scenario until 55 %, the
hard one until its end less `_MARGIN_S`), a scenario's unused time passing on to the next:
each archive run is held to what is left of its scenario's (`archive_run_s`), and a scenario
whose time is up ends with the figures it has, named in `cut_short`. So the JSON line is
always printed, within the deadline (`bench_wall_s`), on a loaded machine too.

Prints one JSON line. Usage: python bench/archive.py [--sources 1000] [--rate 600] [--deadline 900]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.archive import archive
from pipeline.capture import SOURCE_FAILS
from pipeline.draft import new_draft
from pipeline.models import SourceEntry
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store

PAGE = "<html><body><h1>Incident {n}</h1><p>The API was down for {n} minutes after a bad deploy.</p></body></html>"
PERMANENT = ("not-found", "no-access", "blocked-url", "invalid-url-syntax", "invalid-host-resolution")


def make_sources(farm: SiteFarm, prefix: str, count: int, root: Path) -> tuple[Store, list[str]]:
    site = farm.add_site(prefix)
    store = Store(root)
    urls = []
    for n in range(count):
        site.pages[f"/{prefix}/{n}"] = Page.html(PAGE.format(n=n))
        urls.append(site.url(f"/{prefix}/{n}"))
        store.write_draft(new_draft(SourceEntry(url=urls[-1])))
    return store, urls


# What the benchmark keeps for itself at its end: the last run's requests in flight (each ends
# within `wayback_timeout_s`), the stand-ins stopped, the line printed.
_MARGIN_S = 15.0
# Where each scenario's time ends, as shares of the deadline (the next gets what one leaves).
_SHARES = {"rate": 0.35, "failures": 0.55, "hard": 1.0}


class Clock:
    """The benchmark's deadline and each scenario's share of it."""

    def __init__(self, deadline_s: float) -> None:
        self.start = time.monotonic()
        self.deadline_s = deadline_s
        self.cut_short: list[str] = []

    def left(self, scenario: str) -> float:
        """Seconds left of the scenario's time."""
        end = self.start + self.deadline_s * _SHARES[scenario]
        if scenario == "hard":
            end -= _MARGIN_S
        return end - time.monotonic()

    def run_s(self, scenario: str) -> float | None:
        """An archive run's deadline (`archive_run_s`): what is left of the scenario's time; None
        (and the scenario named cut short) when too little is left for a run."""
        left = self.left(scenario) - 5.0  # a request in flight at the run's deadline ends within its timeout
        if left < 1.0:
            if scenario not in self.cut_short:
                self.cut_short.append(scenario)
            return None
        return left


def settings_for(root: Path, wayback: WaybackStandIn, rate: float) -> Settings:
    return Settings(
        root=root,
        wayback_url=wayback.url,
        wayback_access_key="bench-access",
        wayback_secret_key="bench-secret",
        captures_per_minute=rate,
        cdx_per_minute=rate * 2,
        status_polls_per_minute=rate * 20,  # the stand-in sets no limit on looks at jobs
        capture_sessions=wayback.sessions,
        poll_interval_s=0.02,
        poll_timeout_s=5.0,
        breaker_backoff_s=0.5,
        reuse_capture_within_s=0,
        max_capture_attempts=10,
        wayback_timeout_s=5.0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=600.0, help="captures a minute, the stand-in's and the client's")
    parser.add_argument("--hard-sources", type=int, default=12, help="sources of the hard scenario")
    parser.add_argument("--hard-rate", type=float, default=7.0, help="captures a minute in the hard scenario")
    parser.add_argument("--outage", type=float, default=60.0, help="seconds the archive is down in the hard scenario")
    parser.add_argument("--outage-after", type=float, default=20.0, help="seconds into the hard scenario it goes down")
    parser.add_argument("--drop-share", type=float, default=0.02, help="share of answers cut off mid-way")
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds the whole benchmark may take")
    args = parser.parse_args()
    clock = Clock(args.deadline)

    figures: dict[str, object] = {"sources": args.sources, "rate_per_min": args.rate, "deadline_s": args.deadline}
    with tempfile.TemporaryDirectory() as tmp, SiteFarm() as farm:
        figures |= rate_scenario(args, farm, Path(tmp), clock)
        figures |= failure_scenario(args, farm, Path(tmp), clock)
        figures |= hard_scenario(args, farm, Path(tmp), clock)
    figures["cut_short"] = clock.cut_short
    figures["bench_wall_s"] = round(time.monotonic() - clock.start, 1)
    print(json.dumps(figures))


def standin(args: argparse.Namespace, **changes: Any) -> WaybackStandIn:
    """The scenarios' Wayback stand-in: the bench's keys, `args.rate` captures a minute (twice that of
    CDX), ten sessions; `changes` override any of them."""
    rules = WaybackRules(
        access_key="bench-access",
        secret_key="bench-secret",
        captures_per_minute=args.rate,
        cdx_per_minute=args.rate * 2,
        sessions=10,
    )
    return WaybackStandIn(replace(rules, **changes))


def rate_scenario(args: argparse.Namespace, farm: SiteFarm, tmp: Path, clock: Clock) -> dict[str, object]:
    """1. The rate achieved against the rate allowed."""
    with standin(args) as wayback:
        store, urls = make_sources(farm, "rate", args.sources, tmp / "rate")
        wayback.failures.drop_share = args.drop_share  # as the service drops them, under load
        run_s = clock.run_s("rate")
        start = time.perf_counter()
        report = archive(
            store, settings_for(store.root, wayback, args.rate).model_copy(update={"archive_run_s": run_s})
        )
        wall = time.perf_counter() - start
        captured = report.counts()["captured"]
        achieved = captured / (wall / 60.0)
        states = {s.url: s.archive for d in store.drafts() for s in d.sources}
        rate_lost = sum(1 for url in urls if states[url].status != "captured")
        if rate_lost and clock.left("rate") <= 5.0 and "rate" not in clock.cut_short:
            clock.cut_short.append("rate")  # the run ended by its deadline with sources left
        return {
            "wall_s": round(wall, 2),
            "achieved_per_min": round(achieved, 1),
            "rate_ratio": round(achieved / args.rate, 3),
            "throttled": wayback.counts["429"],
            "rate_lost": rate_lost,
            "rate_duplicated": sum(1 for url in urls if len(wayback.captures_of(url)) > 1),
            "rate_problem": report.problem,
            "dropped": wayback.counts["dropped"],
        }


def failure_scenario(args: argparse.Namespace, farm: SiteFarm, tmp: Path, clock: Clock) -> dict[str, object]:
    """2. Every failure switch on, runs repeated until nothing is left to do."""
    with standin(args, job_seconds=0.05) as wayback:
        store, urls = make_sources(farm, "fail", args.sources, tmp / "fail")
        f = wayback.failures
        f.storm_429, f.error_after_capture, f.error_in_200, f.session_limit = 5, 10, 10, 5
        f.cdx_lag_s = 0.5
        f.drop_share = args.drop_share
        f.job_errors = {urls[n]: f"error:{PERMANENT[n % len(PERMANENT)]}" for n in range(0, args.sources, 40)}
        settings = settings_for(store.root, wayback, args.rate)
        runs, stopped = 0, 0
        for runs in range(1, 30):
            if runs == 3:
                f.expire_jobs = True  # jobs forgotten at once: the index must answer
            if runs == 5:
                f.expire_jobs, f.cdx_lag_s = False, 0.0
            run_s = clock.run_s("failures")
            if run_s is None:
                runs -= 1
                break
            report = archive(store, settings.model_copy(update={"archive_run_s": run_s}))
            stopped += report.problem == Reason.SERVICE_UNREACHABLE
            if not report.sources:
                break
        final = {s.url: s.archive for d in store.drafts() for s in d.sources}
        return {
            "failure_runs": runs,
            "failed_permanently": sum(1 for a in final.values() if a.status == "failed"),
            "lost": sum(
                1
                for a in final.values()
                if not (a.status == "captured" or (a.status == "failed" and a.reason in PERMANENT))
            ),
            "duplicated": sum(1 for url in urls if len(wayback.captures_of(url)) > 1),
            "fail_dropped": wayback.counts["dropped"],
            # Runs that took the archive for out: it never was (drops, 5xx and 429s are passing trouble).
            "fail_runs_stopped": stopped,
        }


def hard_scenario(args: argparse.Namespace, farm: SiteFarm, tmp: Path, clock: Clock) -> dict[str, object]:
    """3. One session, slow jobs, an outage and a 429 burst, at the service's own rate."""
    with standin(args, captures_per_minute=args.hard_rate, sessions=1, job_seconds=(2.0, 6.0)) as wayback:
        store, urls = make_sources(farm, "hard", args.hard_sources, tmp / "hard")
        wayback.failures.storm_429 = 5
        wayback.failures.drop_share = args.drop_share
        began = time.monotonic()
        outage = threading.Timer(args.outage_after, wayback.down_for, args=(args.outage,))
        outage.start()
        settings = settings_for(store.root, wayback, args.hard_rate).model_copy(
            update={"capture_sessions": 3, "poll_interval_s": 1.0, "poll_max_interval_s": 5.0, "poll_timeout_s": 60}
        )
        hard_runs, up_captured, up_seconds = 0, 0, 0.0
        while hard_runs < 30:
            run_s = clock.run_s("hard")
            if run_s is None:
                break
            hard_runs += 1
            run_began = time.monotonic()
            report = archive(store, settings.model_copy(update={"archive_run_s": run_s}))
            if not report.sources:
                break
            if report.problem is None and report.counts()["captured"]:
                # A run that met no outage: the service up and answering all along.
                up_captured += report.counts()["captured"]
                up_seconds += time.monotonic() - run_began
            if report.problem is not None:
                # The next scheduled run comes when the service is back (here: the outage's end).
                back = began + args.outage_after + args.outage - time.monotonic()
                pause = max(0.0, min(back, clock.left("hard") - 1.0))
                time.sleep(pause)
        hard_wall = time.monotonic() - began
        outage.cancel()
        final = {s.url: s.archive for d in store.drafts() for s in d.sources}
        # The scenario's time less the part of the outage it lasted through.
        outage_met = max(0.0, min(hard_wall, args.outage_after + args.outage) - args.outage_after)
        up_minutes = max(hard_wall - outage_met, 1.0) / 60.0
        return {
            "hard_sources": args.hard_sources,
            "hard_runs": hard_runs,
            "hard_wall_s": round(hard_wall, 1),
            "failed_for_service_reasons": sum(
                1 for a in final.values() if a.status == "failed" and a.reason not in SOURCE_FAILS
            ),
            "hard_lost": sum(1 for a in final.values() if a.status != "captured"),
            "hard_duplicated": sum(1 for url in urls if len(wayback.captures_of(url)) > 1),
            # Submits that started no job: the burst's 429s, and any refused for a busy session.
            "hard_refused_submits": wayback.counts["save"] - len(wayback.jobs),
            "hard_429": wayback.counts["429"],
            "hard_dropped": wayback.counts["dropped"],
            # Over the runs that met no outage; and over the whole scenario less the outage,
            # which also counts the pauses the 429 burst asked for and the polls cut by the outage.
            "hard_rate_ratio_up": round(up_captured / (up_seconds / 60.0) / args.hard_rate, 3) if up_seconds else 0.0,
            "hard_rate_ratio_overall": round(len(wayback.jobs) / up_minutes / args.hard_rate, 3),
        }


if __name__ == "__main__":
    main()
