"""Archiving: every source of every draft gets a capture in the Wayback Machine.

    report = archive(store, settings)              # every source not yet captured
    report = archive(store, settings, draft_ids)   # the sources of some drafts

The state of each source (`sources[].archive` in its draft) is written after every
step that matters, above all right after a job is submitted, so a run killed at any
point loses nothing: the next run polls the job it left, or finds its capture in the
index, instead of capturing again.

One source's way through (each failure class of the reference handled as it deserves):
1. captured but not yet seen in the index: look it up (CDX) and confirm it;
2. a job left by an earlier run: poll it;
3. an existing capture younger than `reuse_capture_within_s`: reuse it;
4. no keys: wait (said once per run), the source stays pending with reason `no-keys`;
5. submit (SPN2) and poll: success records the link at once (confirmed on a later
   pass); a retry-worthy error counts an attempt; a permanent one fails the source
   with its reason; `too-many-daily-captures` means "captured today": find it; an
   ambiguous 5xx or timeout after submit, or an expired job, looks in the index for a
   capture made since before submitting again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pipeline import interrupt
from pipeline.batch import each, raise_unexpected, tally, tally_reasons
from pipeline.errors import (
    CaptureLimitError,
    InvalidRecord,
    LockBusy,
    RecordNotFound,
    WaybackAuthError,
    WaybackError,
    WaybackThrottled,
    WaybackUnavailable,
)
from pipeline.models import ArchiveState, ArchiveStatus, Draft, utc_now
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.wayback import (
    PERMANENT_ERRORS,
    RETRY_ERRORS,
    CdxRow,
    WaybackClient,
    capture_limit_problem,
    snapshot_timestamp,
    snapshot_url,
    spn_reason,
)

__all__ = ["ArchiveReport", "SourceArchive", "archive", "archive_async", "sources_to_archive"]

_log = logging.getLogger("incidentlib.archive")
Outcome = Literal["captured", "reused", "confirmed", "waiting", "failed"]
# What is worth another try within the same run (the rest waits for the next run or a person).
_RETRY_NOW = RETRY_ERRORS | {Reason.THROTTLED, Reason.SUBMIT_FAILED, Reason.JOB_EXPIRED, Reason.CAPTURE_NOT_YET_VISIBLE}
# A job's status is kept about an hour by the service; older ones are not worth a look.
_JOB_MEMORY = timedelta(minutes=55)


@dataclass
class SourceArchive:
    draft_id: str
    url: str
    outcome: Outcome
    reason: Reason | None = None
    archived: str | None = None


@dataclass
class ArchiveReport:
    sources: list[SourceArchive] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    keys: bool = True
    problem: Reason | None = None  # why captures stopped (no-keys, bad-keys, no-capture-limit)
    busy: bool = False  # another archive run of the data root was capturing: nothing was done
    errors: list[Exception] = field(default_factory=list)  # unexpected: bugs to raise once reported

    def counts(self) -> dict[str, int]:
        return tally((s.outcome for s in self.sources), Outcome)

    def failures(self) -> dict[str, int]:
        return tally_reasons(((s.outcome, s.reason) for s in self.sources), "failed")

    def waiting(self) -> dict[str, int]:
        return tally_reasons(((s.outcome, s.reason) for s in self.sources), "waiting")

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts(),
            "failures": self.failures(),
            "waiting": self.waiting(),
            "keys": self.keys,
            "problem": self.problem,
            "busy": self.busy,
            "requests": self.requests,
            "sources": [asdict(s) for s in self.sources],
        }


def sources_to_archive(draft: Draft) -> list[str]:
    """The source URLs of a draft that still need work: not captured, or captured but unconfirmed."""
    return [
        source.url
        for source in draft.sources
        if not (source.archive.status == ArchiveStatus.CAPTURED and source.archive.confirmed)
        and source.archive.status != ArchiveStatus.FAILED
    ]


class _Step:
    """The new state of one source, and what to report."""

    def __init__(self, state: ArchiveState, archived: str | None, outcome: Outcome) -> None:
        self.state, self.archived, self.outcome = state, archived, outcome


def _captured(state: ArchiveState, found: CdxRow | str, *, outcome: Outcome, confirmed: bool, url: str) -> _Step:
    """Captured: `found` is a row of the index, or the link a finished job gave."""
    link = found.link if isinstance(found, CdxRow) else found
    original = found.original if isinstance(found, CdxRow) else url
    new = state.model_copy(
        update={
            "status": ArchiveStatus.CAPTURED,
            "reason": None,
            "job_id": None,
            "job_submitted_at": None,
            "captured_at": state.captured_at if outcome == "confirmed" and state.captured_at else utc_now(),
            "reused": outcome == "reused" or state.reused,
            "confirmed": confirmed,
            # A redirect made the capture's URL differ from the source's: keep both.
            "captured_url": original if original != url else state.captured_url,
        }
    )
    return _Step(new, link, outcome)


def _pending(state: ArchiveState, reason: Reason, *, attempt: bool, max_attempts: int, **update: object) -> _Step:
    attempts = state.attempts + (1 if attempt else 0)
    if attempts >= max_attempts:
        failed = state.model_copy(
            update={
                "status": ArchiveStatus.FAILED,
                "reason": reason,  # the attempts say it was the last
                "attempts": attempts,
                "last_attempt_at": utc_now(),
                "job_id": None,
                **update,
            }
        )
        return _Step(failed, None, "failed")
    new = state.model_copy(
        update={
            "status": ArchiveStatus.PENDING,
            "reason": reason,
            "attempts": attempts,
            "last_attempt_at": utc_now() if attempt else state.last_attempt_at,
            **update,
        }
    )
    return _Step(new, None, "waiting")


def _failed(state: ArchiveState, reason: Reason, detail: str | None = None) -> _Step:
    new = state.model_copy(
        update={
            "status": ArchiveStatus.FAILED,
            "reason": reason,
            "detail": detail,
            "attempts": state.attempts + 1,
            "last_attempt_at": utc_now(),
            "job_id": None,
        }
    )
    return _Step(new, None, "failed")


class _Archiver:
    def __init__(self, store: Store, settings: Settings, client: WaybackClient) -> None:
        self.store, self.settings, self.client = store, settings, client
        self.keys_ok = client.has_keys
        self.keys_problem = Reason.NO_KEYS  # or BAD_KEYS once the archive has refused them
        self.sessions = asyncio.Semaphore(settings.capture_sessions)

    async def save(self, draft_id: str | None, url: str, step: _Step) -> None:
        """Write one source's new state into its draft, under the draft's lock (no draft: nothing to keep)."""
        if draft_id is None:
            return

        def change(draft: Draft) -> Draft | None:
            sources = []
            for source in draft.sources:
                if source.url == url:
                    source = source.model_copy(
                        update={"archive": step.state, "archived": step.archived or source.archived}
                    )
                sources.append(source)
            updated = draft.model_copy(update={"sources": sources})
            return updated if updated != draft else None

        await asyncio.to_thread(self.store.update_draft, draft_id, change)

    async def look(self, url: str, since: datetime | None = None, *, timestamp: str | None = None) -> CdxRow | None:
        """The newest capture since a moment (or the one at `timestamp`); None when the index cannot say."""
        try:
            rows = await self.client.captures(url, since=since, timestamp=timestamp)
        except WaybackError:
            return None
        return rows[-1] if rows else None

    async def one(self, draft_id: str, url: str, state: ArchiveState, recorded: str | None = None) -> _Step:
        s = self.settings
        # 1. captured, not yet seen in the index: confirm that very capture, not another.
        if state.status == ArchiveStatus.CAPTURED:
            timestamp = snapshot_timestamp(recorded)
            row = await self.look(state.captured_url or url, timestamp=timestamp) if timestamp else None
            if row is not None:
                return _captured(state, row, outcome="confirmed", confirmed=True, url=url)
            return _Step(state, recorded, "captured")
        # 2. a job an earlier run left: poll it; a submit whose answer was never seen: look first.
        if state.job_submitted_at:
            if state.job_id and utc_now() - state.job_submitted_at < _JOB_MEMORY:
                return await self.poll(draft_id, url, state, state.job_id, state.job_submitted_at)
            row = await self.look(url, state.job_submitted_at - timedelta(minutes=1))
            if row is not None:
                return _captured(state, row, outcome="captured", confirmed=True, url=url)
        # 3. an existing capture young enough: reuse it.
        since = utc_now() - timedelta(seconds=s.reuse_capture_within_s) if s.reuse_capture_within_s else None
        row = await self.look(url, since) if s.reuse_capture_within_s else None
        if row is not None:
            return _captured(state, row, outcome="reused", confirmed=True, url=url)
        if state.job_id:  # nothing came of an earlier job: start afresh (its time is kept, see capture)
            state = state.model_copy(update={"job_id": None})
        # 4. no keys: wait for an operator.
        if not self.keys_ok:
            return _pending(state, self.keys_problem, attempt=False, max_attempts=s.max_capture_attempts)
        # 5. submit and poll.
        return await self.capture(draft_id, url, state)

    async def capture(self, draft_id: str | None, url: str, state: ArchiveState) -> _Step:
        s = self.settings
        async with self.sessions:
            submitted_at = utc_now()
            # An earlier submit whose answer was never seen may have captured meanwhile: the
            # archive itself is asked not to capture again within that time.
            earlier = state.job_submitted_at
            not_within = (submitted_at - earlier).total_seconds() + 120 if earlier else None
            # Durable before the request: a run killed while the archive answers looks for
            # the capture next time instead of making a second one.
            state = state.model_copy(
                update={"job_id": None, "job_submitted_at": submitted_at, "reason": Reason.SUBMITTING}
            )
            await self.save(draft_id, url, _Step(state, None, "waiting"))
            try:
                answer = await self.client.submit(url, not_within_s=not_within)
            except (WaybackAuthError, CaptureLimitError) as exc:
                problem = Reason.NO_CAPTURE_LIMIT if isinstance(exc, CaptureLimitError) else Reason.BAD_KEYS
                if self.keys_ok:
                    _log.warning("archive: %s; captures stop for this run", exc)
                self.keys_ok, self.keys_problem = False, problem
                return _pending(state, problem, attempt=False, max_attempts=s.max_capture_attempts)
            except WaybackThrottled:
                return _pending(state, Reason.THROTTLED, attempt=False, max_attempts=s.max_capture_attempts)
            except (WaybackUnavailable, WaybackError):
                # Ambiguous: the capture may have gone through. Look before submitting again.
                row = await self.look(url, submitted_at - timedelta(minutes=1))
                if row is not None:
                    return _captured(state, row, outcome="captured", confirmed=True, url=url)
                return _pending(state, Reason.SUBMIT_FAILED, attempt=True, max_attempts=s.max_capture_attempts)
            if answer.error:
                return await self.refused(url, state, answer.error, submitted_at)
            if answer.job_id is None:
                # A capture younger than if_not_archived_within exists; the index may not show it yet.
                row = await self.look(url, submitted_at - timedelta(seconds=s.reuse_capture_within_s or 86400))
                if row is not None:
                    return _captured(state, row, outcome="reused", confirmed=True, url=url)
                return _pending(
                    state, Reason.CAPTURE_NOT_YET_VISIBLE, attempt=False, max_attempts=s.max_capture_attempts
                )
            # Durable before anything else: a run killed now polls this job next time.
            submitted = state.model_copy(
                update={
                    "job_id": answer.job_id,
                    "job_submitted_at": submitted_at,
                    "attempts": state.attempts + 1,
                    "last_attempt_at": submitted_at,
                    "reason": Reason.JOB_SUBMITTED,
                }
            )
            await self.save(draft_id, url, _Step(submitted, None, "waiting"))
            return await self.poll(draft_id, url, submitted, answer.job_id, submitted_at)

    async def refused(self, url: str, state: ArchiveState, error: str, submitted_at: datetime) -> _Step:
        s = self.settings
        if error == "too-many-daily-captures":  # "already captured today": find today's capture
            row = await self.look(url, submitted_at.replace(hour=0, minute=0, second=0, microsecond=0))
            if row is not None:
                return _captured(state, row, outcome="reused", confirmed=True, url=url)
            return _pending(
                state, Reason.CAPTURED_TODAY_NOT_YET_VISIBLE, attempt=False, max_attempts=s.max_capture_attempts
            )
        reason, detail = spn_reason(error)
        if reason in RETRY_ERRORS:
            return _pending(state, reason, attempt=True, max_attempts=s.max_capture_attempts)
        return _failed(state, reason, detail)

    async def poll(
        self, draft_id: str | None, url: str, state: ArchiveState, job_id: str, submitted_at: datetime
    ) -> _Step:
        s = self.settings
        deadline = asyncio.get_running_loop().time() + s.poll_timeout_s
        while True:
            try:
                job = await self.client.job(job_id)
            except WaybackAuthError:
                return _pending(state, Reason.BAD_KEYS, attempt=False, max_attempts=s.max_capture_attempts)
            except WaybackError:  # throttled, unavailable or unreadable: look again after a pause
                job = None
            if job is not None and job.status == "success" and job.timestamp:
                original = job.original_url or url
                if job.http_status is not None and job.http_status >= 400:
                    return _failed(state, Reason.ARCHIVED_ERROR_PAGE, f"HTTP {job.http_status}")
                # Recorded now; the index may show it only later, when a pass confirms it.
                step = _captured(
                    state, snapshot_url(job.timestamp, original), outcome="captured", confirmed=False, url=url
                )
                if original != url:
                    step.state = step.state.model_copy(update={"captured_url": original})
                return step
            if job is not None and job.status == "error":
                if job.error in ("job-not-found", "job-expired") or job.error is None:
                    row = await self.look(url, submitted_at - timedelta(minutes=1))
                    if row is not None:
                        return _captured(state, row, outcome="captured", confirmed=True, url=url)
                    return _pending(
                        state,
                        Reason.JOB_EXPIRED,
                        attempt=False,
                        max_attempts=s.max_capture_attempts,
                        job_id=None,
                        job_submitted_at=None,
                    )
                reason, detail = spn_reason(job.error)
                if reason in PERMANENT_ERRORS or reason not in RETRY_ERRORS:
                    return _failed(state, reason, detail)
                return _pending(
                    state,
                    reason,
                    attempt=False,
                    max_attempts=s.max_capture_attempts,
                    job_id=None,
                    job_submitted_at=None,
                )
            if asyncio.get_running_loop().time() >= deadline:
                return _pending(state, Reason.JOB_PENDING, attempt=False, max_attempts=s.max_capture_attempts)
            await asyncio.sleep(s.poll_interval_s)


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
    ids = store.ids("draft") if draft_ids is None else draft_ids
    # One piece of work per URL, however many drafts cite it: one capture serves them all.
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
                drafts, _state, _recorded = work.setdefault(source.url, ([], source.archive, source.archived))
                drafts.append(draft_id)
    if on_plan:
        on_plan(len(work))
    report = ArchiveReport()
    async with WaybackClient(settings) as client:
        archiver = _Archiver(store, settings, client)
        if client.has_keys and work:
            try:
                status = await client.user_status()
                if status.available == 0:
                    _log.warning("archive: no free capture sessions now; jobs will wait for one")
            except WaybackAuthError as exc:
                archiver.keys_ok, archiver.keys_problem = False, Reason.BAD_KEYS
                _log.warning("archive: %s; only existing captures will be looked up", exc)
            except WaybackError as exc:
                _log.warning("archive: could not check the account: %s", exc)
            problem = await capture_limit_problem(settings.capture_limit) if settings.capture_limit else None
            if problem:
                archiver.keys_ok, archiver.keys_problem = False, Reason.NO_CAPTURE_LIMIT
                _log.warning("archive: %s; only existing captures will be looked up", problem)
        elif not client.has_keys and work:
            _log.warning("archive: no archive keys; looking up existing captures only, new ones wait")
        report.keys = archiver.keys_ok

        async def one(url: str) -> SourceArchive:
            draft_ids, state, recorded = work[url]
            step = await archiver.one(draft_ids[0], url, state, recorded)
            # Retry-worthy trouble is tried again in this run too, after a doubling pause.
            for retry in range(settings.in_run_retries):
                if step.outcome != "waiting" or step.state.reason not in _RETRY_NOW:
                    break
                await asyncio.sleep(min(settings.poll_interval_s * 2**retry, 60.0))
                step = await archiver.one(draft_ids[0], url, step.state, recorded)
            for draft_id in draft_ids:
                await archiver.save(draft_id, url, step)
            return SourceArchive(draft_ids[0], url, step.outcome, step.state.reason, step.archived)

        def failed(url: str, exc: Exception) -> SourceArchive:
            return SourceArchive(work[url][0][0], url, "failed", Reason.INTERNAL_ERROR)

        report.sources, report.errors = await each(work, one, failed, on_source)
        report.requests = dict(client.requests)
        report.keys = archiver.keys_ok
        report.problem = None if archiver.keys_ok else archiver.keys_problem
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
            held.enter_context(store.lock("captures", timeout=0))
        except LockBusy:
            _log.warning("archive: another archive run of this data root is capturing; its sources wait for the next")
            return ArchiveReport(busy=True)
        report = interrupt.run(archive_async(store, settings, draft_ids, on_source, on_plan))
    if raise_errors:
        raise_unexpected(report.errors, "sources")
    return report
