"""What a flow run shows while and after it runs: progress, summary tables and reports.

Prefect keeps these on the UI's Artifacts page under fixed keys (`crawl-progress`,
`crawl-summary`, `crawl-report`, ...), so the newest run's are always where a person looks.
This process's listeners (the command line's progress bar) hear the same progress.
Rendering only: every figure comes from a report the library made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import cast
from uuid import UUID

from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)

from pipeline.archive import ArchiveReport
from pipeline.capture import CaptureOutcome
from pipeline.crawl import CrawlReport
from pipeline.discover import DiscoverReport
from pipeline.links import RefreshReport
from pipeline.publish import PromoteReport

__all__ = [
    "Progress",
    "ProgressListener",
    "progress_listeners",
    "publish_archive_summary",
    "publish_crawl_summary",
    "publish_discover_summary",
    "publish_promote_summary",
    "publish_refresh_summary",
]

# Whoever watches this process's flow runs (the command line's progress bar): each hears
# (flow name, done, total) as an item ends. Listeners run on the flow's threads.
ProgressListener = Callable[[str, int, int], None]
progress_listeners: list[ProgressListener] = []


class Progress:
    """Items done out of a total, shared by the threads of one flow run: kept in a Prefect
    progress artifact and told to this process's listeners. The total is known once the work
    is planned (`plan`)."""

    def __init__(self, flow_name: str, artifact_key: str) -> None:
        self.flow_name = flow_name
        self.total = 0
        self.done = 0
        # Called from sync code, Prefect's dispatcher runs the sync variant: a UUID, not a coroutine.
        self.artifact_id = cast(UUID | None, create_progress_artifact(0.0, key=artifact_key))
        self._lock = threading.Lock()
        self._last_reported = 0.0

    def plan(self, total: int) -> None:
        self.total = total
        self._tell()

    def _tell(self) -> None:
        for listener in list(progress_listeners):
            listener(self.flow_name, self.done, self.total)

    def advance(self) -> None:
        with self._lock:
            self.done += 1
            self._tell()
            percent = 100.0 * self.done / max(self.total, 1)
            # An artifact update costs a request to the API: report every 2 %, and the end.
            if percent - self._last_reported < 2.0 and self.done != self.total:
                return
            self._last_reported = percent
        if self.artifact_id is not None:
            update_progress_artifact(self.artifact_id, min(percent, 100.0))

    def finish(self) -> None:
        # Threads report as they go and may arrive out of order; the end is stated once.
        if self.artifact_id is not None:
            update_progress_artifact(self.artifact_id, 100.0)


def publish_crawl_summary(report: CrawlReport) -> None:
    counts = report.counts()
    create_table_artifact(
        key="crawl-summary",
        table=[{"outcome": name, "sources": n} for name, n in counts.items()]
        + [{"outcome": "requests", "sources": report.requests}, {"outcome": "bodies", "sources": report.bodies}],
        description="What the last crawl did",
    )
    lines = ["# Crawl", "", "| outcome | sources |", "| --- | --- |"]
    lines += [f"| {name} | {n} |" for name, n in counts.items()]
    new = [s for s in report.sources if s.outcome == "new"]
    failed = [s for s in report.sources if s.outcome == "failed"]
    if new:
        lines += ["", "## New drafts", ""] + [f"- `drafts/{s.draft_id}.json` from {s.url}" for s in new]
    if failed:
        lines += ["", "## Failures", ""] + [f"- **{s.reason}** {s.url}: {s.message}" for s in failed]
    create_markdown_artifact(key="crawl-report", markdown="\n".join(lines), description="New drafts and failures")


def publish_discover_summary(report: DiscoverReport) -> None:
    rows = [{"outcome": name, "feeds": n} for name, n in report.counts().items()]
    rows += [{"outcome": f"failed: {reason}", "feeds": n} for reason, n in report.failures().items()]
    create_table_artifact(key="discover-summary", table=rows, description="What the last discover run did")
    lines = ["# Discover", "", "| feed | outcome | entries | new candidates | registered | updated |"]
    lines += ["| --- | --- | --- | --- | --- | --- |"]
    lines += [
        f"| {f.name or f.url} | {f.outcome} | {f.entries} | {len(f.candidates)} | {len(f.registered)} "
        f"| {len(f.updated)} |"
        for f in report.feeds
    ]
    failed = [f for f in report.feeds if f.outcome == "failed"]
    if failed:
        lines += ["", "## Failures", ""] + [f"- **{f.reason}** {f.url}: {f.message}" for f in failed]
    warned = [f for f in report.feeds if f.warnings]
    if warned:
        lines += ["", "## Warnings", ""] + [f"- {f.url}: {w}" for f in warned for w in f.warnings]
    create_markdown_artifact(key="discover-report", markdown="\n".join(lines), description="Feeds read, candidates")


def publish_archive_summary(report: ArchiveReport) -> None:
    rows = [{"outcome": name, "sources": n} for name, n in report.counts().items()]
    rows += [{"outcome": f"waiting: {reason}", "sources": n} for reason, n in report.waiting().items()]
    rows += [{"outcome": f"failed: {reason}", "sources": n} for reason, n in report.failures().items()]
    create_table_artifact(key="archive-summary", table=rows, description="What the last archive run did")
    lines = ["# Archive", ""]
    if report.busy:
        lines += ["Another archive run of this data root was capturing: nothing done, the sources wait.", ""]
    elif report.problem is not None:
        lines += [f"Captures stopped ({report.problem}): existing captures were looked up, new ones wait.", ""]
    kept = (CaptureOutcome.CAPTURED, CaptureOutcome.REUSED, CaptureOutcome.CONFIRMED)
    captured = [s for s in report.sources if s.archived and s.outcome in kept]
    if captured:
        lines += ["## Captures", ""] + [f"- [{s.url}]({s.archived}) ({s.outcome})" for s in captured]
    failed = [s for s in report.sources if s.outcome == CaptureOutcome.FAILED]
    if failed:
        lines += ["", "## Failures", ""] + [f"- **{s.reason}** {s.url}" for s in failed]
    create_markdown_artifact(key="archive-report", markdown="\n".join(lines), description="Captures and failures")


def publish_promote_summary(report: PromoteReport) -> None:
    rows = [{"outcome": name, "drafts": n} for name, n in report.counts().items()]
    create_table_artifact(key="promote-summary", table=rows, description="What the last promotion did")


def publish_refresh_summary(report: RefreshReport) -> None:
    create_table_artifact(
        key="refresh-summary",
        table=[{"outcome": k, "sources": v} for k, v in report.counts().items()],
        description="What the last link refresh found",
    )
    needs_person = [s for s in report.sources if s.outcome in ("gone", "moved", "blocked", "failed")]
    lines = ["# Links", ""] + [
        f"- **{s.outcome}** {s.url}"
        + (f" → {s.moved_to}" if s.moved_to else "")
        + (f" (kept: {s.archived})" if s.archived else "")
        for s in needs_person
    ]
    create_markdown_artifact(key="refresh-report", markdown="\n".join(lines), description="Links that need a person")
