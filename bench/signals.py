"""Signals at random moments: the library stays valid and no process is left behind.

`--trials` runs (40) of `incidentlib crawl`, `archive` or `promote`, each a process of its
own on one data root, each sent SIGTERM (half the trials) or SIGKILL (the other half) at a
random moment while it works: a crawl of slow local pages, an archive run against the
Wayback stand-in with jobs that take a while, a promotion of many approved drafts. After
each, the figures count what a stop must not leave: faults `validate` finds, processes
still running with the data root's Prefect home (a server, a flow run), and, for SIGTERM,
how long the command took to stop and the exit status it gave (143).

Prints one JSON line. Usage: python bench/signals.py [--trials 40] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil

from pipeline.draft import new_draft
from pipeline.models import ArchiveState, Draft, DraftSource, Origin, SourceEntry
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store, init_data_root
from pipeline.validate import validate

BIN = Path(sys.executable).parent
PAGE = "# Incident {n}\n\n## Summary\n\nThe API was down for {n} minutes after a bad deploy of the cache.\n"
COMMANDS = ("crawl", "archive", "promote")


def leftovers(home: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("PREFECT_HOME") == str(home):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def approved_draft(url: str, n: int) -> Draft:
    """A complete approved draft, ready to be published."""
    case = json.loads((Path(__file__).parents[1] / "tests" / "fixtures" / "case.json").read_text(encoding="utf-8"))
    fields = {k: v for k, v in case.items() if k not in ("id", "url", "updated_at", "sources", "related")}
    return Draft.model_validate(
        {
            **fields,
            "recurrence_of": None,
            "id": f"chaos-{n:05d}",
            "state": "approved",
            "review": {"written_by": "alice", "reviewed_by": "bob", "reviewed_at": "2026-11-20T10:00:00Z"},
            "origin": Origin(url=url, canonical_url=url).model_dump(mode="json"),
            "sources": [
                DraftSource(
                    url=url,
                    kind="blog",
                    archived=f"https://web.archive.org/web/20260101000000/{url}",
                    archive=ArchiveState(status="captured", confirmed=True),
                ).model_dump(mode="json")
            ],
        }
    )


def prepare(command: str, store: Store, site: Site, trial: int) -> None:
    """Give the command work that lasts longer than the moment it is stopped."""
    if command == "crawl":
        lines = []
        for n in range(30):
            path = f"/t{trial}/pm{n}.md"
            site.pages[path] = Page.markdown(PAGE.format(n=n))
            lines.append(f"- url: {site.url(path)}\n")
        (store.sources_dir / f"t{trial}.yaml").write_text("".join(lines), encoding="utf-8")
    elif command == "archive":
        for n in range(30):
            path = f"/a{trial}/pm{n}.md"
            site.pages[path] = Page.markdown(PAGE.format(n=n))
            store.write_draft(new_draft(SourceEntry(url=site.url(path))))
    else:
        for n in range(150):
            store.write_draft(approved_draft(f"https://example.org/p{trial}/{n}", trial * 1000 + n))


def trial(env: dict[str, str], root: Path, command: str, how: signal.Signals, delay: float) -> dict[str, Any]:
    process = subprocess.Popen(
        [str(BIN / "incidentlib"), command, "--root", str(root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(delay)  # the random moment the signal lands: what this bench varies
    sent = time.monotonic()
    process.send_signal(how)
    _, err = process.communicate(timeout=120)
    stopped_s = time.monotonic() - sent
    home = root / ".incidentlib" / "prefect"
    deadline = time.monotonic() + 10.0
    while leftovers(home) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = leftovers(home)
    for process_left in left:
        process_left.kill()
    faults = validate(Store(root)).faults
    return {
        "command": command,
        "signal": how.name,
        "delay_s": round(delay, 2),
        "status": process.returncode,
        "stopped_s": round(stopped_s, 2),
        "faults": len(faults),
        "left": len(left),
        "traceback": "Traceback" in err,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp, SiteFarm() as farm:
        site = farm.add_site("chaos", latency_s=0.3)
        root = Path(tmp) / "library"
        init_data_root(root)
        store = Store(root)
        with WaybackStandIn(
            WaybackRules(access_key="bench-access", secret_key="bench-secret", captures_per_minute=600, job_seconds=0.5)
        ) as wayback:
            env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "INCIDENTLIB_"))}
            env |= {
                "INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "1",
                "INCIDENTLIB_PER_HOST_DELAY_S": "0.1",
                "INCIDENTLIB_WAYBACK_URL": wayback.url,
                "INCIDENTLIB_WAYBACK_ACCESS_KEY": "bench-access",
                "INCIDENTLIB_WAYBACK_SECRET_KEY": "bench-secret",
                "INCIDENTLIB_CAPTURES_PER_MINUTE": "600",
                "INCIDENTLIB_CDX_PER_MINUTE": "1200",
                "INCIDENTLIB_POLL_INTERVAL_S": "0.2",
                "INCIDENTLIB_STATUS_POLLS_PER_MINUTE": "6000",
                "INCIDENTLIB_REUSE_CAPTURE_WITHIN_S": "0",
            }
            signals = [signal.SIGTERM, signal.SIGKILL] * (args.trials // 2)
            rng.shuffle(signals)
            results = []
            for n, how in enumerate(signals):
                command = COMMANDS[n % len(COMMANDS)]
                prepare(command, store, site, n)
                # Commands start their own Prefect server first (about 7 s): the moment lands
                # anywhere from its start-up to the middle of the work.
                results.append(trial(env, root, command, how, rng.uniform(1.0, 14.0)))
    terms = [r for r in results if r["signal"] == "SIGTERM"]
    print(
        json.dumps(
            {
                "trials": len(results),
                "by_command": dict(Counter(r["command"] for r in results)),
                "validate_faults": sum(r["faults"] for r in results),
                "processes_left": sum(r["left"] for r in results),
                "sigterm_statuses": dict(Counter(str(r["status"]) for r in terms)),
                "sigterm_stop_s_median": round(statistics.median(r["stopped_s"] for r in terms), 2) if terms else None,
                "sigterm_stop_s_max": max((r["stopped_s"] for r in terms), default=None),
                "tracebacks": sum(r["traceback"] for r in results),
                "targets": {"validate_faults": 0, "processes_left": 0, "sigterm_stop_s_max": 10},
                "runs": results,
            }
        )
    )


if __name__ == "__main__":
    main()
