"""Prefect flows: orchestration only. Each task calls one library function of the same name.

Prefect's own cost is about a second per hundred task runs on a small machine, so a
task here is a share of the work (a group of hosts), not one URL; its result is a small
report. Durable facts (what was fetched, extracted, written) live in the records.
"""

from __future__ import annotations

import threading
from pathlib import Path
from uuid import UUID

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_progress_artifact, create_table_artifact, update_progress_artifact
from prefect.task_runners import ThreadPoolTaskRunner

from pipeline import archive as archiving
from pipeline import crawl as crawling
from pipeline import links as linking
from pipeline import publish as publishing
from pipeline.models import SourceEntry
from pipeline.settings import Settings
from pipeline.store import Store

__all__ = ["archive", "crawl", "promote", "refresh"]


class _Progress:
    """Sources done out of a total, shared by the threads of one flow run."""

    def __init__(self, total: int, artifact_id: UUID | None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.artifact_id = artifact_id
        self._lock = threading.Lock()
        self._last_reported = 0.0

    def advance(self) -> float | None:
        with self._lock:
            self.done += 1
            percent = 100.0 * self.done / self.total
            # An artifact update costs a request to the API: report every 2 %, and the end.
            if percent - self._last_reported < 2.0 and self.done != self.total:
                return None
            self._last_reported = percent
            return percent


_progress: dict[str, _Progress] = {}


def _settings(root: str | None) -> Settings:
    return Settings(root=Path(root)) if root else Settings()


@task(name="crawl-hosts", retries=1, retry_delay_seconds=10)
def crawl_hosts(root: str, entries: list[dict], concurrency: int, progress_key: str) -> dict:
    """Crawl one share of the registry (whole hosts) with the library's `crawl`."""
    logger = get_run_logger()
    settings = _settings(root)
    progress = _progress.get(progress_key)

    def on_source(source: crawling.SourceReport) -> None:
        detail = f": {source.message}" if source.message else ""
        logger.info("%s %s -> drafts/%s.json%s", source.outcome, source.url, source.draft_id, detail)
        if progress is not None:
            percent = progress.advance()
            if percent is not None and progress.artifact_id is not None:
                update_progress_artifact(progress.artifact_id, percent)

    report = crawling.crawl(
        Store.from_settings(settings),
        settings,
        [SourceEntry.model_validate(e) for e in entries],
        on_source,
        concurrency=concurrency,
        raise_errors=False,  # the flow reports first, then fails; a retry would redo the whole share
    )
    return report.to_dict()


def _publish_summary(report: crawling.CrawlReport) -> None:
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


@flow(name="crawl", log_prints=False)
def crawl(root: str | None = None) -> dict:
    """Fetch every source of the registry, extract it, and write or update its draft."""
    logger = get_run_logger()
    settings = _settings(root)
    store = Store.from_settings(settings)
    entries, faults = crawling.registry_entries(store)
    for fault in faults:
        logger.warning("registry: %s", fault)
    groups = crawling.host_groups(entries, settings.crawl_task_groups)
    concurrency = crawling.share_concurrency(settings, len(groups))

    key = f"crawl-{id(entries)}"
    progress_id = create_progress_artifact(0.0, key="crawl-progress")
    _progress[key] = _Progress(len(entries), progress_id)
    try:
        futures = [
            crawl_hosts.submit(str(store.root), [e.model_dump(mode="json") for e in group], concurrency, key)
            for group in groups
        ]
        report = crawling.CrawlReport()
        for future in futures:
            report = report.merge(crawling.CrawlReport.from_dict(future.result()))
    finally:
        del _progress[key]
    # Threads report as they go and may arrive out of order; the end is stated once.
    update_progress_artifact(progress_id, 100.0)
    _publish_summary(report)
    counts = report.counts()
    logger.info("crawl: %s", ", ".join(f"{n} {name}" for name, n in counts.items()))
    if report.errors:
        # Every other source is done and the summary is published: now the bug is shown.
        raise RuntimeError(f"{len(report.errors)} sources failed unexpectedly; the first:\n{report.errors[0]}")
    summary = report.to_dict()
    summary["registry_faults"] = [str(f) for f in faults]
    new_drafts = [s.draft_id for s in report.sources if s.outcome == "new"]
    summary["archive"] = archive_sources(str(store.root), new_drafts) if new_drafts else None
    return summary


@task(name="archive-sources")
def archive_sources(root: str, draft_ids: list[str] | None = None) -> dict:
    """Capture the sources of some drafts (all when None) with the library's `archive`.

    One task for the whole batch: the capture and index rates are the bottleneck, and
    the limiter and breaker they share live in this process.
    """
    logger = get_run_logger()
    settings = _settings(root)
    store = Store.from_settings(settings)
    progress = _Progress(1, create_progress_artifact(0.0, key="archive-progress"))

    def on_source(source: archiving.SourceArchive) -> None:
        detail = f" ({source.reason})" if source.reason else ""
        link = f" -> {source.archived}" if source.archived else ""
        logger.info("%s %s%s%s", source.outcome, source.url, detail, link)
        percent = progress.advance()
        if percent is not None and progress.artifact_id is not None:
            update_progress_artifact(progress.artifact_id, percent)

    def on_plan(total: int) -> None:
        progress.total = max(total, 1)

    report = archiving.archive(store, settings, draft_ids, on_source, on_plan)
    if progress.artifact_id is not None:
        update_progress_artifact(progress.artifact_id, 100.0)
    _publish_archive_summary(report)
    return report.to_dict()


def _publish_archive_summary(report: archiving.ArchiveReport) -> None:
    rows = [{"outcome": name, "sources": n} for name, n in report.counts().items()]
    rows += [{"outcome": f"waiting: {reason}", "sources": n} for reason, n in report.waiting().items()]
    rows += [{"outcome": f"failed: {reason}", "sources": n} for reason, n in report.failures().items()]
    create_table_artifact(key="archive-summary", table=rows, description="What the last archive run did")
    lines = ["# Archive", ""]
    if not report.keys:
        lines += ["No usable archive keys: existing captures were looked up, new ones wait.", ""]
    captured = [s for s in report.sources if s.archived and s.outcome in ("captured", "reused", "confirmed")]
    if captured:
        lines += ["## Captures", ""] + [f"- [{s.url}]({s.archived}) ({s.outcome})" for s in captured]
    failed = [s for s in report.sources if s.outcome == "failed"]
    if failed:
        lines += ["", "## Failures", ""] + [f"- **{s.reason}** {s.url}" for s in failed]
    create_markdown_artifact(key="archive-report", markdown="\n".join(lines), description="Captures and failures")


@flow(name="archive", log_prints=False)
def archive(root: str | None = None) -> dict:
    """Capture every source of every draft that has no capture yet, and confirm fresh ones."""
    settings = _settings(root)
    summary = archive_sources(str(Store.from_settings(settings).root))
    get_run_logger().info("archive: %s", ", ".join(f"{n} {name}" for name, n in summary["counts"].items()))
    return summary


def crawl_flow_for(settings: Settings):  # noqa: ANN201 - a Prefect Flow
    """The crawl flow with a task runner sized to the settings' task groups."""
    return crawl.with_options(task_runner=ThreadPoolTaskRunner(max_workers=settings.crawl_task_groups))


@task(name="promote-drafts")
def promote_drafts(root: str) -> dict:
    """Publish every approved draft with the library's `promote`."""
    logger = get_run_logger()
    settings = _settings(root)
    report = publishing.promote(Store.from_settings(settings), settings)
    for entry in report.drafts:
        if entry.outcome == "incomplete":
            logger.warning("%s stays approved: missing %s", entry.draft_id, ", ".join(entry.missing))
        else:
            logger.info("%s %s as %s", entry.draft_id, entry.outcome, entry.case_id)
    rows = [{"outcome": name, "drafts": n} for name, n in report.counts().items()]
    create_table_artifact(key="promote-summary", table=rows, description="What the last promotion did")
    return report.to_dict()


@flow(name="promote", log_prints=False)
def promote(root: str | None = None) -> dict:
    """Publish every approved, complete draft as a case; say what the others lack."""
    return promote_drafts(str(Store.from_settings(_settings(root)).root))


@task(name="refresh-links")
def refresh_links(root: str) -> dict:
    """Check every source of every draft and case with the library's `refresh`."""
    logger = get_run_logger()
    settings = _settings(root)
    report = linking.refresh(Store.from_settings(settings), settings)
    for source in report.sources:
        if source.outcome != "unchanged":
            extra = source.moved_to or source.reason or source.archived or ""
            logger.info("%s %s %s", source.outcome, source.url, extra)
    counts = report.counts()
    create_table_artifact(
        key="refresh-summary", table=[{"outcome": k, "sources": v} for k, v in counts.items()],
        description="What the last link refresh found",
    )
    needs_person = [s for s in report.sources if s.outcome in ("gone", "moved", "blocked", "failed")]
    lines = ["# Links", ""] + [
        f"- **{s.outcome}** {s.url}" + (f" → {s.moved_to}" if s.moved_to else "") + (f" (kept: {s.archived})" if s.archived else "")
        for s in needs_person
    ]
    create_markdown_artifact(key="refresh-report", markdown="\n".join(lines), description="Links that need a person")
    return report.to_dict()


@flow(name="refresh", log_prints=False)
def refresh(root: str | None = None) -> dict:
    """Check every source of every draft and case: live status, captures, re-archive what changed."""
    return refresh_links(str(Store.from_settings(_settings(root)).root))
