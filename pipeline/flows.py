"""Prefect flows: orchestration only. Each task calls one library function of the same name.

Prefect's own cost is about a second per hundred task runs on a small machine, so a
task here is a share of the work (a group of hosts), not one URL; its result is a small
report. Durable facts (what was fetched, extracted, written) live in the records.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import UUID

from prefect import flow, get_run_logger, task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.context import get_run_context
from prefect.task_runners import ThreadPoolTaskRunner

from pipeline import archive as archiving
from pipeline import crawl as crawling
from pipeline import links as linking
from pipeline import publish as publishing
from pipeline.errors import SettingsError
from pipeline.models import SourceEntry, utc_now
from pipeline.settings import Settings, interval_seconds
from pipeline.store import Store

__all__ = [
    "DEPLOYMENT",
    "archive",
    "crawl",
    "deploy",
    "deployments",
    "progress_listeners",
    "promote",
    "refresh",
    "request_promotion",
    "serve",
]


# Whoever watches this process's flow runs (the command line's progress bar): each hears
# (flow name, done, total) as a source ends. Listeners run on the flow's threads.
ProgressListener = Callable[[str, int, int], None]
progress_listeners: list[ProgressListener] = []


class _Progress:
    """Sources done out of a total, shared by the threads of one flow run: kept in a Prefect
    progress artifact and told to this process's listeners. The total is known once the work
    is planned (`plan`)."""

    def __init__(self, flow_name: str, artifact_key: str) -> None:
        self.flow_name = flow_name
        self.total = 0
        self.done = 0
        self.artifact_id: UUID | None = create_progress_artifact(0.0, key=artifact_key)
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


_progress: dict[str, _Progress] = {}


@contextmanager
def _recorded(store: Store, flow_name: str) -> Iterator[dict]:
    """Keep how this flow run went in the data root's runs file (read by `status`), however it ends.

    The caller puts the run's counts in the dict it is given.
    """
    run: dict = {"started_at": utc_now().isoformat(), "state": "failed"}
    try:
        flow_run = get_run_context().flow_run
        run["flow_run"] = flow_run.name if flow_run else None
    except Exception:  # no run context (the flow's function called bare)
        run["flow_run"] = None
    counts: dict = {}
    try:
        yield counts
        run["state"] = "completed"
    except BaseException as exc:
        run["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        raise
    finally:
        run["finished_at"] = utc_now().isoformat()
        run["counts"] = counts
        store.record_run(flow_name, run)


def _settings(root: str | None) -> Settings:
    settings = Settings(root=Path(root)) if root else Settings()
    # A worker runs each flow in a temporary folder: without a data root given, that empty
    # folder would pass for an empty library and the run would "succeed" doing nothing.
    if not any((settings.root / folder).is_dir() for folder in ("sources", "drafts", "cases")):
        raise SettingsError(
            f"{settings.root}: not a data root (no sources/, drafts/ or cases/); give the deployment a root "
            "(incidentlib deploy --root) or set INCIDENTLIB_ROOT where the flow runs"
        )
    return settings


@task(name="crawl-hosts", retries=1, retry_delay_seconds=10)
def crawl_hosts(root: str, entries: list[dict], concurrency: int, progress_key: str) -> dict:
    """Crawl one share of the registry (whole hosts) with the library's `crawl`."""
    logger = get_run_logger()
    settings = _settings(root)
    progress = _progress.get(progress_key)

    def on_source(source: crawling.SourceReport) -> None:
        detail = ": ".join(["", *(part for part in (source.reason, source.message) if part)])
        # A failure is a warning: shown by default, one line naming the URL; the rest with -v.
        level = logging.WARNING if source.outcome == "failed" else logging.INFO
        logger.log(level, "%s %s -> drafts/%s.json%s", source.outcome, source.url, source.draft_id, detail)
        if progress is not None:
            progress.advance()

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
def crawl(root: str | None = None, archive_new: bool = True) -> dict:
    """Fetch every source of the registry, extract it, and write or update its draft;
    then (`archive_new`) capture the sources of the new drafts."""
    logger = get_run_logger()
    settings = _settings(root)
    store = Store.from_settings(settings)
    with _recorded(store, "crawl") as counts:
        entries, faults = crawling.registry_entries(store)
        for fault in faults:
            logger.warning("registry: %s", fault)
        groups = crawling.host_groups(entries, settings.crawl_task_groups)
        concurrency = crawling.share_concurrency(settings, len(groups))

        key = f"crawl-{id(entries)}"
        progress = _progress[key] = _Progress("crawl", "crawl-progress")
        progress.plan(len(entries))
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
        progress.finish()
        _publish_summary(report)
        counts.update(report.counts())
        logger.info("crawl: %s", ", ".join(f"{n} {name}" for name, n in report.counts().items()))
        if report.errors:
            # Every other source is done and the summary is published: now the bug is shown.
            raise RuntimeError(f"{len(report.errors)} sources failed unexpectedly; the first:\n{report.errors[0]}")
        summary = report.to_dict()
        summary["registry_faults"] = [str(f) for f in faults]
        new_drafts = [s.draft_id for s in report.sources if s.outcome == "new"]
        summary["archive"] = archive_sources(str(store.root), new_drafts) if new_drafts and archive_new else None
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
    progress = _Progress("archive", "archive-progress")

    def on_source(source: archiving.SourceArchive) -> None:
        detail = f" ({source.reason})" if source.reason else ""
        link = f" -> {source.archived}" if source.archived else ""
        logger.log(
            logging.WARNING if source.outcome == "failed" else logging.INFO,
            "%s %s%s%s",
            source.outcome,
            source.url,
            detail,
            link,
        )
        progress.advance()

    report = archiving.archive(store, settings, draft_ids, on_source, progress.plan)
    progress.finish()
    _publish_archive_summary(report)
    return report.to_dict()


def _publish_archive_summary(report: archiving.ArchiveReport) -> None:
    rows = [{"outcome": name, "sources": n} for name, n in report.counts().items()]
    rows += [{"outcome": f"waiting: {reason}", "sources": n} for reason, n in report.waiting().items()]
    rows += [{"outcome": f"failed: {reason}", "sources": n} for reason, n in report.failures().items()]
    create_table_artifact(key="archive-summary", table=rows, description="What the last archive run did")
    lines = ["# Archive", ""]
    if report.busy:
        lines += ["Another archive run of this data root was capturing: nothing done, the sources wait.", ""]
    elif not report.keys:
        lines += [f"Captures stopped ({report.problem}): existing captures were looked up, new ones wait.", ""]
    captured = [s for s in report.sources if s.archived and s.outcome in ("captured", "reused", "confirmed")]
    if captured:
        lines += ["## Captures", ""] + [f"- [{s.url}]({s.archived}) ({s.outcome})" for s in captured]
    failed = [s for s in report.sources if s.outcome == "failed"]
    if failed:
        lines += ["", "## Failures", ""] + [f"- **{s.reason}** {s.url}" for s in failed]
    create_markdown_artifact(key="archive-report", markdown="\n".join(lines), description="Captures and failures")


def _one_recorded_task(flow_name: str, task_, root: str | None) -> dict:  # a Prefect Task
    """A flow that is one task over the data root: run it, its counts kept in the runs file."""
    store = Store.from_settings(_settings(root))
    with _recorded(store, flow_name) as counts:
        summary = task_(str(store.root))
        counts.update(summary["counts"])
    return summary


@flow(name="archive", log_prints=False)
def archive(root: str | None = None) -> dict:
    """Capture every source of every draft that has no capture yet, and confirm fresh ones."""
    summary = _one_recorded_task("archive", archive_sources, root)
    get_run_logger().info("archive: %s", ", ".join(f"{n} {name}" for name, n in summary["counts"].items()))
    return summary


def crawl_flow_for(settings: Settings):  # a Prefect Flow
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
    return _one_recorded_task("promote", promote_drafts, root)


@task(name="refresh-links")
def refresh_links(root: str) -> dict:
    """Check every source of every draft and case with the library's `refresh`."""
    logger = get_run_logger()
    settings = _settings(root)
    progress = _Progress("refresh", "refresh-progress")

    def on_source(source: linking.LinkReport) -> None:
        extra = source.moved_to or source.reason or source.archived or ""
        level = logging.WARNING if source.outcome in ("gone", "moved", "failed") else logging.INFO
        logger.log(level, "%s %s %s", source.outcome, source.url, extra)
        progress.advance()

    report = linking.refresh(Store.from_settings(settings), settings, on_source, progress.plan)
    progress.finish()
    counts = report.counts()
    create_table_artifact(
        key="refresh-summary",
        table=[{"outcome": k, "sources": v} for k, v in counts.items()],
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
    return report.to_dict()


@flow(name="refresh", log_prints=False)
def refresh(root: str | None = None) -> dict:
    """Check every source of every draft and case: live status, captures, re-archive what changed."""
    return _one_recorded_task("refresh", refresh_links, root)


# ------------------------------------------------------------ deployments and schedules

DEPLOYMENT = "incidentlib"
_FLOWS = {"crawl": crawl, "archive": archive, "refresh": refresh, "promote": promote}
DEPLOYMENT_FLOWS = tuple(_FLOWS)


def schedule_of(settings: Settings, flow_name: str) -> str | None:
    return getattr(settings, f"{flow_name}_schedule")


def deployments(settings: Settings, root: str | None) -> list:
    """The four flows as deployments named `incidentlib`, each with its schedule from the settings.

    Entry points are module paths (`pipeline.flows.crawl`), so any machine with incidentlib
    installed runs them, wherever its checkout lies. `root` is the data root given to
    every run; None leaves it to each worker's own INCIDENTLIB_ROOT.
    """
    from prefect.client.schemas.schedules import CronSchedule
    from prefect.deployments.runner import EntrypointType
    from pydantic import ValidationError

    made = []
    for name, flow_ in _FLOWS.items():
        schedule = schedule_of(settings, name)
        timing: dict = {}
        if schedule:
            seconds = interval_seconds(schedule)
            if not seconds:
                try:  # checked by Prefect's own rules, so that a bad line fails here, named
                    CronSchedule(cron=schedule)
                except ValidationError as exc:
                    message = exc.errors(include_url=False)[0]["msg"]
                    raise SettingsError(f"INCIDENTLIB_{name.upper()}_SCHEDULE: {schedule!r}: {message}") from None
            timing = {"interval": seconds} if seconds else {"cron": schedule}
        made.append(
            flow_.to_deployment(
                name=DEPLOYMENT,
                parameters={"root": root} if root else {},
                description=(flow_.description or "").split("\n")[0],
                tags=["incidentlib"],
                entrypoint_type=EntrypointType.MODULE_PATH,
                # One run of each at a time, wherever the workers are: two crawls at once would
                # double every host's request rate, two archive runs the capture rate.
                concurrency_limit=1,
                **timing,
            )
        )
    return made


def serve(settings: Settings) -> None:
    """Run the deployments here until interrupted: scheduled runs start as processes of their own.

    The schedules stay active when this stops (a restart must not pause them); the
    server keeps the runs that fell due meanwhile and this picks them up when back.
    """
    from prefect import serve as prefect_serve

    prefect_serve(*deployments(settings, str(settings.root)), pause_on_shutdown=False, print_starting_message=False)


def deploy(settings: Settings, pool: str, root: str | None) -> list[str]:
    """Create (or update) the deployments on work pool `pool`, for its workers to run.

    With `capture_limit` set, also create that global concurrency limit, paced at the
    capture rate, for the workers' archive runs to share.
    """
    from prefect import deploy as prefect_deploy
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    made = deployments(settings, root)
    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(pool)
        except ObjectNotFound:
            raise SettingsError(
                f"--pool {pool}: no such work pool (prefect work-pool create {pool} --type process)"
            ) from None
    ids = prefect_deploy(
        *made, work_pool_name=pool, build=False, push=False, print_next_steps_message=False, ignore_warnings=True
    )
    if settings.capture_limit:
        decay = settings.captures_per_minute / 60.0
        with get_client(sync_client=True) as client:
            try:
                client.create_global_concurrency_limit(
                    GlobalConcurrencyLimitCreate(name=settings.capture_limit, limit=1, slot_decay_per_second=decay)
                )
            except ObjectAlreadyExists:  # kept in step with the rate configured now
                client.update_global_concurrency_limit(
                    settings.capture_limit, GlobalConcurrencyLimitUpdate(limit=1, slot_decay_per_second=decay)
                )
    return [str(i) for i in ids]


def _for_root(deployment, root: str) -> bool:  # a Prefect DeploymentResponse
    """Whether a deployment runs on this data root (one without a root runs on its workers' own)."""
    given = (deployment.parameters or {}).get("root")
    return not given or Path(given).resolve() == Path(root).resolve()


def request_promotion(root: str) -> str | None:
    """Ask the server for a run of the promote deployment now; its flow run's name, or None when
    the server has no such deployment for this data root (nothing is served)."""
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            deployment = client.read_deployment_by_name(f"promote/{DEPLOYMENT}")
        except ObjectNotFound:
            return None
    if not _for_root(deployment, root):
        return None
    return run_deployment(deployment.id, timeout=0).name


def served_deployments(root: str) -> dict[str, dict]:
    """What the Prefect server knows of each flow's deployment for data root `root`: whether its
    schedule is active, whether something is there to run it (`ready`: a `serve` or a worker
    polling), its next scheduled run, and its work pool (None when served by `serve`)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.exceptions import ObjectNotFound

    found: dict[str, dict] = {}
    with get_client(sync_client=True) as client:
        for name in _FLOWS:
            try:
                deployment = client.read_deployment_by_name(f"{name}/{DEPLOYMENT}")
            except ObjectNotFound:
                continue
            if not _for_root(deployment, root):
                continue
            scheduled = client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id])),
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))
                ),
                sort=FlowRunSort.EXPECTED_START_TIME_ASC,
                limit=1,
            )
            found[name] = {
                "active": bool(deployment.schedules)
                and any(s.active for s in deployment.schedules)
                and not deployment.paused,
                "ready": str(getattr(deployment.status, "value", deployment.status) or "").upper() == "READY",
                "next_run": scheduled[0].expected_start_time.isoformat()
                if scheduled and scheduled[0].expected_start_time
                else None,
                "work_pool": deployment.work_pool_name,
            }
    return found
