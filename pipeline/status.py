"""Where the library stands, for `incidentlib status`: pure but for reading the data root.

What is scheduled comes from the Prefect server when one is known (the caller passes
what it said); when each flow last ran and how it ended comes from the data root's own
runs file, which every flow run writes however it ends, so it is there with no server
at all. The rest is read from the drafts and the link states.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from pipeline.archive import sources_to_archive
from pipeline.models import ArchiveStatus, LinkStatus, RunRecord
from pipeline.queue import Unreadable, read_drafts
from pipeline.settings import Settings, schedule_text
from pipeline.store import Store

__all__ = ["FLOWS", "FlowStatus", "Status", "status"]

# The seven flows `serve` and `deploy` make deployments of, in their order (pipeline.deployments.DEPLOYMENT_FLOWS,
# which imports Prefect: a test keeps the two in step).
FLOWS = ("discover", "crawl", "archive", "refresh", "promote", "site", "learn")


@dataclass
class FlowStatus:
    flow: str
    schedule: str | None  # from the settings
    served: bool | None  # whether the server has it scheduled and active; None: no server known
    ready: bool | None  # whether a `serve` or a worker is there to run it; None: no server known
    next_run: str | None  # the server's next scheduled run
    last_run: RunRecord | None  # started_at, finished_at, state, counts, error
    # The schedules the server holds: those the last `serve` or `deploy` applied, which are the
    # ones in force, and may differ from the settings now. None: no server known.
    in_force: list[str] | None = None
    stuck: list[str] = field(default_factory=list)  # runs pending too long, waiting for the slot, or late

    @property
    def differs(self) -> bool:
        """Whether the schedules in force are not what the settings say (a restart of serve applies
        these), whichever way either is spelt: the server shows the settings' "60m" as "1h"."""
        if self.in_force is None:
            return False
        return [schedule_text(s) for s in self.in_force] != ([schedule_text(self.schedule)] if self.schedule else [])

    def row(self) -> tuple[str, ...]:
        """The flow's row of the status table: flow, schedule, scheduled, next run, last run, ended, counts."""
        schedule = self.schedule or "on demand"
        if self.in_force is not None:
            schedule = ", ".join(self.in_force) or "on demand"
            if self.differs:
                schedule += f" (settings: {self.schedule or 'on demand'})"
        if self.served is None:
            scheduled = "-"
        else:
            scheduled = "no" if not self.served else "yes" if self.ready else "yes, nothing runs it"
        last = self.last_run
        ended = (last.state if last else "never run") + (f": {last.error}" if last and last.error else "")
        return (
            self.flow,
            schedule,
            scheduled,
            (self.next_run or "-")[:19],
            last.started_at.isoformat()[:19] if last else "-",
            ended,
            ", ".join(f"{n} {k}" for k, n in (last.counts if last else {}).items()),
        )


@dataclass
class Status:
    server: str | None
    flows: list[FlowStatus]
    drafts: dict[str, int]  # by review state
    cases: int
    waiting_capture: dict[str, int]  # source URLs waiting for a capture, by reason
    failed_capture: dict[str, int]  # source URLs whose capture failed for good, by reason
    links: dict[str, int]  # by status, from the last refresh
    gone: list[str] = field(default_factory=list)  # source URLs that are gone (404/410)
    unreadable: list[Unreadable] = field(default_factory=list)  # draft files that could not be read, and why

    ROW = ("flow", "schedule", "scheduled", "next run", "last run", "ended", "counts")  # FlowStatus.row

    def library(self) -> list[tuple[str, int]]:
        """The library's counts, each with what it counts: drafts by state, cases, captures, links."""
        return [
            *((f"drafts {state}", n) for state, n in self.drafts.items()),
            *([("drafts unreadable", len(self.unreadable))] if self.unreadable else []),
            ("cases published", self.cases),
            *((f"waiting for capture: {reason}", n) for reason, n in self.waiting_capture.items()),
            *((f"capture failed: {reason}", n) for reason, n in self.failed_capture.items()),
            *((f"links {state}", n) for state, n in self.links.items()),
        ]

    def notes(self) -> list[str]:
        """What needs a person's eye: runs stuck, schedules not in force, links gone, drafts unreadable."""
        found: list[str] = []
        for flow in self.flows:
            found += [f"stuck {flow.flow}: {run}" for run in flow.stuck]
            if flow.differs:
                found.append(
                    f"{flow.flow}: the server runs it on what the last serve or deploy applied, not on the settings "
                    "here; restart serve (or deploy again) to apply them"
                )
        found += [f"gone {url}" for url in self.gone]
        return found + [f"unreadable {bad.path}: {bad.problem}" for bad in self.unreadable]

    def to_dict(self) -> dict:
        found = asdict(self)
        for flow, data in zip(self.flows, found["flows"], strict=True):
            data["last_run"] = flow.last_run.model_dump(mode="json") if flow.last_run else None
        return found


def status(
    store: Store, settings: Settings, server: str | None = None, served: dict[str, dict] | None = None
) -> Status:
    """The library's state; `served` is what the server said of each flow's deployment, by flow name."""
    runs = store.state.read_runs()
    flows = []
    for name in FLOWS:
        deployment = (served or {}).get(name)
        flows.append(
            FlowStatus(
                flow=name,
                schedule=getattr(settings, f"{name}_schedule"),
                served=None if served is None else bool(deployment and deployment.get("active")),
                ready=None if served is None else bool(deployment and deployment.get("ready")),
                next_run=deployment.get("next_run") if deployment else None,
                last_run=runs.get(name),
                in_force=None if served is None else (deployment or {}).get("schedules", []),
                stuck=(deployment or {}).get("stuck", []),
            )
        )
    states: Counter[str] = Counter()
    waiting: dict[str, str] = {}
    failed: dict[str, str] = {}
    drafts, unreadable = read_drafts(store)
    for draft in drafts:
        states[draft.state.value] += 1
        pending = set(sources_to_archive(draft))
        for source in draft.sources:
            if source.archive.status == ArchiveStatus.FAILED:
                failed[source.url] = source.archive.reason or "failed"
            elif source.url in pending and source.archive.status == ArchiveStatus.PENDING:
                waiting[source.url] = source.archive.reason or "not-tried"
    links = store.state.read_links()
    return Status(
        server=server,
        flows=flows,
        drafts=dict(sorted(states.items())),
        cases=len(store.files("case")),
        waiting_capture=dict(Counter(waiting.values()).most_common()),
        failed_capture=dict(Counter(failed.values()).most_common()),
        links=dict(Counter(s.status.value for s in links.values()).most_common()),
        gone=sorted(url for url, s in links.items() if s.status == LinkStatus.GONE),
        unreadable=unreadable,
    )
