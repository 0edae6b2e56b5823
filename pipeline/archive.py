"""Archiving: every source of every draft gets a capture in the Wayback Machine.

    report = archive(store, settings)              # every source not yet captured
    report = archive(store, settings, draft_ids)   # the sources of some drafts

One piece of work per source URL, however many drafts cite it: its way to a confirmed
capture is pipeline.capture's (only the source's own answer can fail it; the account's or
the service's trouble leaves it waiting, with no attempt used). The state of each source
(`sources[].archive` in its draft) is written after every step that matters, above all
right before and after a submit, so a run killed at any point loses nothing: the next run
polls the job it left, or finds its capture in the index, instead of capturing again.

Sources an earlier version failed for the account's or the service's trouble (a session
limit, `submit-failed`, a 5xx) go back to waiting here.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field

from pipeline import interrupt
from pipeline.batch import Report, each, raise_unexpected, tally_reasons
from pipeline.capture import SOURCE_TROUBLE, Archiver, CaptureOutcome, Step, waits_for_service
from pipeline.errors import InvalidRecord, LockBusy, RecordNotFound
from pipeline.models import ArchiveState, ArchiveStatus, Draft
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.wayback import WaybackClient

__all__ = ["ArchiveReport", "SourceArchive", "archive", "archive_async", "sources_to_archive"]

_log = logging.getLogger("incidentlib.archive")
# Waits tried again within the run: the source's server's trouble (an attempt each), and the service's
# passing trouble that the client's own tries did not see through (none used).
_TRIED_AGAIN = SOURCE_TROUBLE | {Reason.SERVICE_ERROR}


@dataclass
class SourceArchive:
    draft_id: str
    url: str
    outcome: CaptureOutcome
    reason: Reason | None = None
    archived: str | None = None


@dataclass
class ArchiveReport(Report):
    ITEMS, OUTCOMES = "sources", CaptureOutcome
    SHOWN = ("counts", "failures", "waiting", "keys", "problem", "busy", "seconds", "requests", "sources")

    sources: list[SourceArchive] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    problem: Reason | None = None  # why captures stopped: no-keys, bad-keys, account-quota, service-unreachable...
    busy: bool = False  # another archive run of the data root was capturing: nothing was done
    seconds: float = 0.0  # how long the run took, from its client's start to its last source
    errors: list[Exception] = field(default_factory=list)  # unexpected: bugs to raise once reported

    @property
    def keys(self) -> bool:
        return self.problem not in (Reason.NO_KEYS, Reason.BAD_KEYS)

    def failures(self) -> dict[str, int]:
        return tally_reasons(((s.outcome, s.reason) for s in self.sources), CaptureOutcome.FAILED)

    def waiting(self) -> dict[str, int]:
        return tally_reasons(((s.outcome, s.reason) for s in self.sources), CaptureOutcome.WAITING)


def sources_to_archive(draft: Draft) -> list[str]:
    """The source URLs of a draft that still need work: not captured, or captured but unconfirmed, or
    failed for the account's or the service's trouble (which no source should fail for)."""
    return [
        source.url
        for source in draft.sources
        if not (source.archive.status == ArchiveStatus.CAPTURED and source.archive.confirmed)
        and (source.archive.status != ArchiveStatus.FAILED or waits_for_service(source.archive))
    ]


def _waiting_again(state: ArchiveState) -> ArchiveState:
    """A source failed for the service's trouble, waiting again (its attempts kept)."""
    if not waits_for_service(state):
        return state
    return state.model_copy(update={"status": ArchiveStatus.PENDING, "job_id": None, "job_submitted_at": None})


def _plan(store: Store, ids: list[str]) -> dict[str, tuple[list[str], ArchiveState, str | None]]:
    """Each source URL with work to do: the drafts citing it, its state, its recorded capture."""
    work: dict[str, tuple[list[str], ArchiveState, str | None]] = {}
    for draft_id in ids:
        try:
            draft = store.read_draft(draft_id)
        except (RecordNotFound, InvalidRecord) as exc:
            _log.warning("archive: %s: skipped: %s", draft_id, exc)
            continue
        pending = set(sources_to_archive(draft))
        for source in draft.sources:
            if source.url in pending:
                drafts, _state, _recorded = work.setdefault(
                    source.url, ([], _waiting_again(source.archive), source.archived)
                )
                drafts.append(draft_id)
    return work


async def archive_async(
    store: Store,
    settings: Settings,
    draft_ids: list[str] | None = None,
    on_source: Callable[[SourceArchive], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
) -> ArchiveReport:
    """Archive the sources of `draft_ids` (every draft when None); see the module's docstring.

    `on_plan` hears how many sources there is work for, before any starts; `on_source`
    hears of each as it ends.
    """
    work = _plan(store, store.ids("draft") if draft_ids is None else draft_ids)
    if on_plan:
        on_plan(len(work))
    report = ArchiveReport()

    async def save(draft_id: str | None, url: str, step: Step) -> None:
        """One source's new state into its draft, under the draft's lock (no draft: nothing to keep)."""
        if draft_id is None:
            return

        def change(draft: Draft) -> Draft | None:
            sources = [
                s.model_copy(update={"archive": step.state, "archived": step.archived or s.archived})
                if s.url == url
                else s
                for s in draft.sources
            ]
            updated = draft.model_copy(update={"sources": sources})
            return updated if updated != draft else None

        await asyncio.to_thread(store.update_draft, draft_id, change)

    async with WaybackClient(settings) as client:
        archiver = Archiver(settings, client, save)
        if work:
            if not client.has_keys:
                _log.warning("archive: no archive keys; looking up existing captures only, new ones wait")
            await archiver.check_account()

        async def one(url: str) -> SourceArchive:
            draft_ids, state, recorded = work[url]
            step = await archiver.capture_source(draft_ids[0], url, state, recorded)
            # The source's server misbehaving, or the service's passing trouble (a submit's answer cut
            # off, a 5xx), is tried again in this run too, after a doubling pause with jitter.
            for retry in range(settings.in_run_retries):
                if step.outcome != CaptureOutcome.WAITING or step.state.reason not in _TRIED_AGAIN:
                    break
                pause = min(settings.poll_interval_s * 2**retry, 60.0) * random.uniform(0.5, 1.5)
                if pause >= client.seconds_left() or not await client.sleep(pause):
                    break  # the run's deadline or the archive out: the next run tries again
                step = await archiver.capture_source(draft_ids[0], url, step.state, recorded)
            for draft_id in draft_ids:
                await save(draft_id, url, step)
            return SourceArchive(draft_ids[0], url, step.outcome, step.state.reason, step.archived)

        def failed(url: str, exc: Exception) -> SourceArchive:
            return SourceArchive(work[url][0][0], url, CaptureOutcome.FAILED, Reason.INTERNAL_ERROR)

        report.sources, report.errors = await each(work, one, failed, on_source)
        report.requests = dict(client.requests)
        report.problem = archiver.out
        report.seconds = time.monotonic() - client.started
    return report


def archive(
    store: Store,
    settings: Settings,
    draft_ids: list[str] | None = None,
    on_source: Callable[[SourceArchive], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
    *,
    raise_errors: bool = True,
) -> ArchiveReport:
    """Capture (or find a capture of) every source not yet captured; see the module's docstring.

    One archive run at a time per data root: the rate limiters live in each process, so two
    at once (a crawl archiving its new drafts while the hourly archive runs) would capture
    at twice the rate. A run that finds another one capturing leaves its sources as they
    are, waiting for the next run, and says so.

    Unexpected errors (bugs) are raised as one ExceptionGroup once every source has had its
    turn (pipeline.batch); with `raise_errors=False` they stay in `report.errors`.
    """
    with ExitStack() as held:
        try:
            held.enter_context(store.state.lock("captures", timeout=0))
        except LockBusy:
            _log.warning("archive: another archive run of this data root is capturing; its sources wait for the next")
            return ArchiveReport(busy=True)
        report = interrupt.run(archive_async(store, settings, draft_ids, on_source, on_plan))
    if raise_errors:
        raise_unexpected(report.errors, "sources")
    return report
