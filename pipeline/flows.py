"""Prefect flows: orchestration only. Each task calls one library function of the same name.

Prefect's own cost is about a second per hundred task runs on a small machine, so a
task here is a share of the work (a group of hosts), not one URL; its result is a small
report. Durable facts (what was fetched, extracted, written) live in the records. Each
flow returns the library's typed report, which the command line prints; what Prefect's
UI shows is rendered from the same reports (pipeline.artifacts). Deployments and
schedules are in pipeline.deployments.
"""

from __future__ import annotations

import functools
import logging
import signal
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, cast

from prefect import Flow, flow, get_run_logger, task
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.states import Cancelled, State
from prefect.task_runners import ThreadPoolTaskRunner

from pipeline import archive as archiving
from pipeline import crawl as crawling
from pipeline import discover as discovering
from pipeline import interrupt, lifeline
from pipeline import learn as learning
from pipeline import links as linking
from pipeline import publish as publishing
from pipeline.artifacts import (
    Progress,
    publish_archive_summary,
    publish_crawl_summary,
    publish_discover_summary,
    publish_promote_summary,
    publish_refresh_summary,
)
from pipeline.assist.run import AssistReport, DraftAssist
from pipeline.batch import raise_unexpected
from pipeline.errors import SettingsError
from pipeline.models import RunRecord, RunState, SourceEntry, utc_now
from pipeline.settings import Settings
from pipeline.site import build as site_building
from pipeline.store import Store, data_root_problem

if TYPE_CHECKING:  # imported by the task that runs it: the index's libraries take seconds to load
    from pipeline.duplicates import DuplicateReport

# A flow run that a `serve` started follows it from here, before Prefect's engine marks the run
# as running (pipeline.lifeline); anywhere else this does nothing.
lifeline.follow_serve(early=True)

__all__ = ["archive", "crawl", "crawl_flow_for", "discover", "promote", "refresh", "run", "site"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


# The crawl's progress, for its tasks (which run in this process, on its thread pool) to advance:
# a task's parameters are recorded by Prefect, so each is given its run's key, not the object.
_progress: dict[str, Progress] = {}


def _stoppable(body: Callable[P, R]) -> Callable[P, R | State[Any]]:
    """A flow body that a signal stops within seconds, the run then recorded as cancelled.

    Prefect's engine puts its own SIGTERM handler in place for a flow run: it would end the
    run as crashed, but only after waiting for every thread to finish its work (minutes, in
    a crawl). The body takes the signals back (pipeline.interrupt): a first signal cancels
    the work in flight, whatever thread it runs in, and the run ends Cancelled. A run that a
    `serve` started stops the same way when that `serve` is killed outright, rather than crawl
    on beside the runs of the next `serve` (pipeline.lifeline): the run follows it from the
    moment its flows are loaded, and the body checks again first (if that `serve` is already
    gone, the run ends there, before any work).
    """

    @functools.wraps(body)
    def stoppable(*args: P.args, **kwargs: P.kwargs) -> R | State[Any]:
        with interrupt.signal_handlers(), interrupt.cooperating():
            lifeline.follow_serve()
            try:
                return body(*args, **kwargs)
            except interrupt.Interrupted as exc:
                get_run_logger().warning("%s: the work in flight was cancelled; the rest waits for the next run", exc)
                return Cancelled(message=str(exc))

    return stoppable


def _results(futures: list[PrefectFuture[T]]) -> list[T]:
    """The tasks' results; a task ended by a stop request is the stop, not a task's failure."""
    results = []
    for future in futures:
        try:
            results.append(future.result())
        except BaseException:
            interrupt.check()
            raise
    return results


@contextmanager
def _recorded(store: Store, flow_name: str) -> Iterator[dict[str, int]]:
    """Keep how this flow run went in the data root's runs file (read by `status`), however it ends.

    The caller puts the run's counts in the dict it is given.
    """
    context = FlowRunContext.get()
    started, flow_run = utc_now(), context.flow_run.name if context and context.flow_run else None
    counts: dict[str, int] = {}
    state: RunState = "failed"
    error: str | None = None
    try:
        yield counts
        state = "completed"
    except interrupt.Interrupted as exc:
        state, error = "cancelled", str(exc)
        raise
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        raise
    finally:
        run = RunRecord(
            started_at=started, finished_at=utc_now(), state=state, flow_run=flow_run, error=error, counts=counts
        )
        store.state.record_run(flow_name, run)


class _Counted(Protocol):
    def counts(self) -> dict[str, int]: ...


C = TypeVar("C", bound=_Counted)


def _one_recorded_task(flow_name: str, task_: Callable[[str], C], root: str | None) -> C:
    """A flow that is one task over the data root: run it, its counts kept in the runs file."""
    _, store = _open_root(root)
    with _recorded(store, flow_name) as counts:
        report = task_(str(store.root))
        counts.update(report.counts())
    return report


def _open_root(root: str | None) -> tuple[Settings, Store]:
    """The settings and the store of the data root `root` (None: INCIDENTLIB_ROOT's), read afresh.
    Every flow and task opens its own from the path alone: Prefect records a task's parameters,
    which must never hold the settings (the keys among them)."""
    settings = Settings(root=Path(root)) if root else Settings()
    # A worker runs each flow in a temporary folder: without a data root given, that empty
    # folder would pass for an empty library and the run would "succeed" doing nothing.
    problem = data_root_problem(settings.root)
    if problem:
        raise SettingsError(
            f"{settings.root}: {problem}; give the deployment a root (incidentlib deploy --root) or set "
            "INCIDENTLIB_ROOT where the flow runs",
            name="INCIDENTLIB_ROOT",
        )
    return settings, Store.from_settings(settings)


@task(name="crawl-hosts", retries=1, retry_delay_seconds=10)
def crawl_hosts(root: str, entries: list[dict[str, Any]], concurrency: int, progress_key: str) -> crawling.CrawlReport:
    """Crawl one share of the registry (whole hosts) with the library's `crawl`."""
    logger = get_run_logger()
    settings, store = _open_root(root)
    progress = _progress.get(progress_key)

    def on_source(source: crawling.SourceReport) -> None:
        detail = ": ".join(["", *(part for part in (source.reason, source.message) if part)])
        level = logging.WARNING if source.outcome == "failed" else logging.INFO
        logger.log(level, "%s %s -> drafts/%s.json%s", source.outcome, source.url, source.draft_id, detail)
        if progress is not None:
            progress.advance()

    return crawling.crawl(
        store,
        settings,
        [SourceEntry.model_validate(e) for e in entries],
        on_source,
        concurrency=concurrency,
        raise_errors=False,  # the flow reports first, then fails; a retry would redo the whole share
    )


@flow(name="crawl", log_prints=False)
@_stoppable
def crawl(root: str | None = None, archive_new: bool = True) -> crawling.CrawlRun:
    """Fetch every source of the registry, extract it, and write or update its draft;
    then (`archive_new`) capture the sources of the new drafts."""
    logger = get_run_logger()
    settings, store = _open_root(root)
    with _recorded(store, "crawl") as counts:
        plan = crawling.plan_crawl(store, settings)
        for fault in plan.faults:
            logger.warning("registry: %s", fault)
        key = f"crawl-{uuid.uuid4().hex}"  # this run's alone, whatever else runs in this process
        progress = _progress[key] = Progress("crawl", "crawl-progress")
        progress.plan(len(plan.entries))
        try:
            futures = [
                crawl_hosts.submit(str(store.root), [e.model_dump(mode="json") for e in share], plan.concurrency, key)
                for share in plan.shares
            ]
            report = crawling.CrawlReport()
            for share in _results(futures):
                report = report.merge(share)
        finally:
            del _progress[key]
        progress.finish()
        publish_crawl_summary(report)
        counts.update(report.counts())
        logger.info("crawl: %s", ", ".join(f"{n} {name}" for name, n in report.counts().items()))
        # Every other source is done and the summary is published: now the bugs are shown.
        raise_unexpected(report.errors, "sources")
        run = crawling.CrawlRun(report, plan.faults)
        then = crawling.after_crawl(report, settings, archive_new=archive_new)
        if then.archive:
            run.archive = archive_sources(str(store.root), then.archive)
        if then.duplicates:
            run.duplicates = check_duplicates(str(store.root), then.duplicates)
        if then.warning:
            logger.warning(then.warning)
        if then.assist:
            run.assist = assist_drafts(str(store.root), then.assist)
            raise_unexpected(run.assist.errors, "drafts")  # bugs, raised once every draft has had its turn
        return run


@task(name="discover-feeds")
def discover_feeds(root: str, feeds: list[str] | None) -> discovering.DiscoverReport:
    """Read the feeds and propose what they list, with the library's `discover`."""
    logger = get_run_logger()
    settings, store = _open_root(root)

    def on_feed(feed: discovering.FeedReport) -> None:
        level = logging.WARNING if feed.outcome == "failed" or feed.warnings else logging.INFO
        found = f"{len(feed.candidates)} new candidates, {len(feed.registered)} registered, {len(feed.updated)} updated"
        detail = f"{feed.reason}: {feed.message}" if feed.outcome == "failed" else found
        logger.log(level, "%s %s: %s%s", feed.outcome, feed.url, detail, "".join(f"; {w}" for w in feed.warnings))

    return discovering.discover(store, settings, feeds, on_feed, raise_errors=False)


@flow(name="discover", log_prints=False)
@_stoppable
def discover(
    root: str | None = None, feeds: list[str] | None = None, crawl_found: bool = True
) -> discovering.DiscoverRun:
    """Read the feeds of sources/feeds.yaml (those due, or those named) and propose what they list as
    candidates; then (`crawl_found`) crawl the sources they registered directly or changed."""
    logger = get_run_logger()
    settings, store = _open_root(root)
    with _recorded(store, "discover") as counts:
        report = discover_feeds(str(store.root), feeds)
        for fault in report.faults:
            logger.warning("feeds: %s", fault)
        publish_discover_summary(report)
        counts.update(report.counts())
        logger.info("discover: %s", ", ".join(f"{n} {name}" for name, n in report.counts().items()))
        raise_unexpected(report.errors, "feeds")
        run = discovering.DiscoverRun(report)
        if crawl_found and report.recrawl:
            entries = [e.model_dump(mode="json") for e in report.recrawl]
            run.crawl = crawl_hosts(str(store.root), entries, settings.concurrency, "")
            raise_unexpected(run.crawl.errors, "sources")
        written = [*report.drafts, *(run.crawl.sources if run.crawl else [])]
        changed = [d for s in written if s.outcome in ("new", "updated") for d in (s.draft_id, *s.parts)]
        if changed:
            run.duplicates = check_duplicates(str(store.root), changed)
        return run


@task(name="check-duplicates")
def check_duplicates(root: str, draft_ids: list[str]) -> DuplicateReport:
    """Compare the drafts just written with the other drafts and the cases, and keep what each may
    duplicate on it (pipeline.duplicates): for a reviewer to merge or dismiss."""
    from pipeline.duplicates import DuplicateReport, flag_duplicates  # the index's libraries: loaded when needed

    logger = get_run_logger()
    _, store = _open_root(root)
    try:
        report = flag_duplicates(store, draft_ids)
    except Exception as exc:  # the drafts are written: a fault of the check is said, and the run goes on
        logger.error("duplicates: not checked: %s: %s", type(exc).__name__, exc)
        return DuplicateReport(unreadable=[f"not checked: {type(exc).__name__}: {exc}"])
    for line in report.unreadable:
        logger.warning("duplicates: %s", line)
    for draft_id, others in report.flagged.items():
        logger.info("possible duplicate: %s of %s", draft_id, ", ".join(others))
    return report


@task(name="assist-drafts")
def assist_drafts(root: str, draft_ids: list[str]) -> AssistReport:
    """Ask the language model for what the drafts lack, with the library's `assist_drafts`. The settings
    (the API's key among them) are read here, in the task, never passed as parameters Prefect records."""
    from pipeline.assist import assist_drafts as assisting

    logger = get_run_logger()
    settings, store = _open_root(root)

    def on_draft(done: DraftAssist) -> None:
        level = logging.WARNING if done.outcome == "failed" else logging.INFO
        detail = f"{done.reason}: {done.message}" if done.outcome == "failed" else ", ".join(done.proposed)
        logger.log(level, "assist %s drafts/%s.json %s", done.outcome, done.draft_id, detail)

    return assisting(store, settings, draft_ids, on_draft=on_draft)


@task(name="archive-sources")
def archive_sources(root: str, draft_ids: list[str] | None = None) -> archiving.ArchiveReport:
    """Capture the sources of some drafts (all when None) with the library's `archive`.

    One task for the whole batch: the capture and index rates are the bottleneck, and
    the limiter and breaker they share live in this process.
    """
    logger = get_run_logger()
    settings, store = _open_root(root)
    progress = Progress("archive", "archive-progress")

    def on_source(source: archiving.SourceArchive) -> None:
        detail = f" ({source.reason})" if source.reason else ""
        link = f" -> {source.archived}" if source.archived else ""
        level = logging.WARNING if source.outcome == "failed" else logging.INFO
        logger.log(level, "%s %s%s%s", source.outcome, source.url, detail, link)
        progress.advance()

    report = archiving.archive(store, settings, draft_ids, on_source, progress.plan, raise_errors=False)
    progress.finish()
    publish_archive_summary(report)
    raise_unexpected(report.errors, "sources")
    return report


@flow(name="archive", log_prints=False)
@_stoppable
def archive(root: str | None = None) -> archiving.ArchiveReport:
    """Capture every source of every draft that has no capture yet, and confirm fresh ones."""
    report = _one_recorded_task("archive", archive_sources, root)
    get_run_logger().info("archive: %s", ", ".join(f"{n} {name}" for name, n in report.counts().items()))
    return report


def run(flow_: Flow[..., Any], kind: type[T], **parameters: Any) -> T:
    """Run a flow in this process and give its report (of type `kind`). A run a signal stopped
    raises Interrupted; a run that failed raises its error."""
    state = cast(State[Any], flow_(**parameters, return_state=True))
    if state.is_cancelled():
        raise interrupt.Interrupted(interrupt.requested() or signal.SIGTERM)
    report = state.result()
    assert isinstance(report, kind), report
    return report


def crawl_flow_for(settings: Settings) -> Flow[..., crawling.CrawlRun | State[Any]]:
    """The crawl flow with a task runner sized to the settings' task groups."""
    runner: ThreadPoolTaskRunner[Any] = ThreadPoolTaskRunner(max_workers=settings.crawl_task_groups)
    # Prefect types the argument as TaskRunner[PrefectFuture], which its own thread pool runner
    # (TaskRunner[PrefectConcurrentFuture]) is not, the type parameter being invariant.
    return crawl.with_options(task_runner=runner)  # type: ignore[arg-type]


@task(name="promote-drafts")
def promote_drafts(root: str) -> publishing.PromoteReport:
    """Publish every approved draft with the library's `promote`."""
    logger = get_run_logger()
    settings, store = _open_root(root)
    report = publishing.promote(store, settings)
    for entry in report.drafts:
        if entry.outcome == "incomplete":
            logger.warning("%s stays approved: missing %s", entry.draft_id, ", ".join(entry.missing))
        else:
            logger.info("%s %s as %s", entry.draft_id, entry.outcome, entry.case_id)
    publish_promote_summary(report)
    return report


@flow(name="promote", log_prints=False)
@_stoppable
def promote(root: str | None = None, build_site: bool = True) -> publishing.PromoteReport:
    """Publish every approved, complete draft as a case; say what the others lack; then (`build_site`),
    when a case was published or updated, rebuild the reader's site."""
    report = _one_recorded_task("promote", promote_drafts, root)
    counts = report.counts()
    if build_site and (counts.get("published") or counts.get("updated")):
        site(root)
    return report


@task(name="build-site")
def build_site_files(root: str) -> site_building.BuildReport:
    """Build the reader's site into the data root's site/ with the library's `build_site`."""
    settings, store = _open_root(root)
    report = site_building.build_site(store, settings)
    get_run_logger().info(
        "site: %s in %.1f s, into %s",
        ", ".join(f"{n} {name}" for name, n in report.counts().items()),
        report.seconds,
        report.folder,
    )
    return report


@flow(name="site", log_prints=False)
@_stoppable
def site(root: str | None = None) -> site_building.BuildReport:
    """Build the reader's site from cases/ into the data root's site/, writing only what changed."""
    return _one_recorded_task("site", build_site_files, root)


@task(name="refresh-links")
def refresh_links(root: str) -> linking.RefreshReport:
    """Check every source of every draft and case with the library's `refresh`."""
    logger = get_run_logger()
    settings, store = _open_root(root)
    progress = Progress("refresh", "refresh-progress")

    def on_source(source: linking.LinkReport) -> None:
        extra = source.moved_to or source.reason or source.archived or ""
        level = logging.WARNING if source.outcome in ("gone", "moved", "failed") else logging.INFO
        logger.log(level, "%s %s %s", source.outcome, source.url, extra)
        progress.advance()

    report = linking.refresh(store, settings, on_source, progress.plan, raise_errors=False)
    progress.finish()
    publish_refresh_summary(report)
    raise_unexpected(report.errors, "links")
    return report


@flow(name="refresh", log_prints=False)
@_stoppable
def refresh(root: str | None = None) -> linking.RefreshReport:
    """Check every source of every draft and case: live status, captures, re-archive what changed."""
    return _one_recorded_task("refresh", refresh_links, root)


@task(name="learn-finder")
def learn_finder(root: str) -> learning.LearnReport:
    """Retrain the finder from the library's reviews with the library's `learn`: kept when no worse."""
    settings, store = _open_root(root)
    report = learning.learn(store, settings)
    logger = get_run_logger()
    logger.info("learn: %s; %s", f"kept {report.new}" if report.kept else "refused", "; ".join(report.reasons))
    return report


@flow(name="learn", log_prints=False)
@_stoppable
def learn(root: str | None = None) -> learning.LearnReport:
    """Retrain the finder from the library's published cases; keep the new model only when, on held-out
    publishers, it is no worse than the one in use."""
    return _one_recorded_task("learn", learn_finder, root)
