"""One source's way to a capture in the Wayback Machine, shared by the archive run and the link refresh.

The rule everything here follows: **only a source's own answer can fail it.** The archive
answers about three things, and each is treated as it deserves:

- the source's own answer for good (not found, gone, blocked, an invalid URL, too many
  redirects, too large, its server's 400 or 405): the source fails, and is not tried again
  (`SOURCE_FAILS`);
- the source's server misbehaving now (a bad gateway, a read timeout, its 501, 505 or 509, a
  job that captured its 5xx; and a code the SPN2 document does not list, so it ends one day):
  an attempt is counted, and the source fails after `max_capture_attempts` of them
  (`SOURCE_TROUBLE`);
- the account's or the service's trouble (a session limit, a quota, a 429, a refused
  connection, a timeout, a 5xx, a page where the API was due, a start put off by an hour,
  the service's own failures, a job that captured nothing or ended without a code): the
  source waits with the reason, uses no attempt, and a later run tries again. When the
  account or the service is out (no keys, refused keys, the day's quota, the client's IP
  blocked, the service unreachable), the run stops submitting and says so once (`RUN_OUT`);
  when the archive pauses the source's host, at the submit or at the job's end, the host's
  other sources wait unsubmitted (`HOST_PAUSES`).

`judgement` is the rule; the manual's table of every Save Page Now code (docs/archive.md) is
checked against it.

Capture sessions are the account's: `/save/status/user` says how many are free; it is read
before submitting and again when a session frees, no more jobs are started than are free,
and a job keeps its session until the job ends. Polls are spaced out as a job ages. Every
state that matters is written into the draft before and right after a submit, so a run
killed at any point is finished by the next, which polls the job it left or finds its
capture in the index, and never captures twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Literal
from urllib.parse import urlsplit

from pipeline.errors import (
    CaptureLimitError,
    WaybackAuthError,
    WaybackCongested,
    WaybackError,
    WaybackNotAsked,
    WaybackThrottled,
    WaybackUnavailable,
)
from pipeline.models import ArchiveState, ArchiveStatus, utc_now
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.wayback import ArchivedUrl, CdxResult, CdxRow, JobState, WaybackClient, snapshot_timestamp

__all__ = [
    "HOST_PAUSES",
    "RUN_OUT",
    "SOURCE_FAILS",
    "SOURCE_TROUBLE",
    "Archiver",
    "CaptureOutcome",
    "Judgement",
    "Step",
    "archived_status_reason",
    "judgement",
    "waits_for_service",
]

_log = logging.getLogger("incidentlib.archive")


class CaptureOutcome(StrEnum):
    """What one step of a source's way to a capture came to; a report counts them in this order."""

    CAPTURED = "captured"  # a new capture, made by a job this run or an earlier one submitted
    REUSED = "reused"  # a capture the archive already held, young enough, kept instead of a new one
    CONFIRMED = "confirmed"  # the capture recorded earlier, seen in the index at last
    SUBMITTED = "submitted"  # a job still running when the run stopped waiting: the next run polls it
    UNCONFIRMED = "unconfirmed"  # the capture recorded earlier, not in the index yet: looked for next run
    WAITING = "waiting"  # no capture now (the archive's trouble, or attempts left): a later run tries again
    FAILED = "failed"  # the source's own answer for good, or its last attempt used: not tried again


# The rule, in one place (the manual's table of every code, docs/archive.md, is checked against it):
# only a source's own answer fails it or counts against it; anything else waits.
# The source's own answer, for good (a 4xx of its server, or the like): it fails, and is not tried again.
SOURCE_FAILS = frozenset(
    {
        Reason.NOT_FOUND,
        Reason.NO_ACCESS,
        Reason.UNAUTHORIZED,
        Reason.BLOCKED,
        Reason.BLOCKED_URL,
        Reason.INVALID_URL_SYNTAX,
        Reason.INVALID_HOST_RESOLUTION,
        Reason.TOO_MANY_REDIRECTS,
        Reason.FILESIZE_LIMIT,
        Reason.ARCHIVED_ERROR_PAGE,
        Reason.BAD_REQUEST,
        Reason.METHOD_NOT_ALLOWED,
        Reason.FTP_ACCESS_DENIED,
    }
)
# The source's server misbehaving now (its 5xx, a broken answer): worth another try later; each counts an attempt.
SOURCE_TROUBLE = frozenset(
    {
        Reason.BAD_GATEWAY,
        Reason.GATEWAY_TIMEOUT,
        Reason.SERVICE_UNAVAILABLE,
        Reason.INVALID_SERVER_RESPONSE,
        Reason.PROTOCOL_ERROR,
        Reason.READ_TIMEOUT,
        Reason.NOT_IMPLEMENTED,
        Reason.HTTP_VERSION_NOT_SUPPORTED,
        Reason.BANDWIDTH_LIMIT_EXCEEDED,
        Reason.ARCHIVED_SERVER_ERROR,
        # A code the SPN2 document does not list: whose it is cannot be told, and waiting for ever
        # on it would never end a source that keeps getting it; so a few attempts, then it fails.
        Reason.SPN_UNKNOWN,
    }
)
# The account or the service out: the run stops submitting (said once); every source waits.
RUN_OUT = frozenset(
    {
        Reason.NO_KEYS,
        Reason.BAD_KEYS,
        Reason.NO_CAPTURE_LIMIT,
        Reason.ACCOUNT_QUOTA,
        Reason.SERVICE_UNREACHABLE,
        Reason.BLOCKED_CLIENT_IP,
    }
)
# The archive paused captures of the source's host: its other sources wait unsubmitted this run.
HOST_PAUSES = frozenset({Reason.HOST_QUOTA})

Judgement = Literal["fails", "attempt", "stops submitting", "pauses the host", "waits"]


def judgement(reason: Reason) -> Judgement:
    """What a run does with a source whose submit or job ended with `reason` (module docstring)."""
    if reason in SOURCE_FAILS:
        return "fails"
    if reason in SOURCE_TROUBLE:
        return "attempt"
    if reason in RUN_OUT:
        return "stops submitting"
    if reason in HOST_PAUSES:
        return "pauses the host"
    return "waits"


def archived_status_reason(status: int) -> Reason:
    """The reason of a job that succeeded with a capture of the page's error (its `http_status`),
    judged by `judgement` as the page's server's answer: a 429 is the host throttling the archive
    (waits), a 5xx its server's trouble now (an attempt), any other 4xx its answer for good (fails)."""
    if status == 429:
        return Reason.TOO_MANY_REQUESTS
    if status >= 500:
        return Reason.ARCHIVED_SERVER_ERROR
    return Reason.ARCHIVED_ERROR_PAGE


# What the run says once when a refusal stops its submits.
_OUT_WHY = {
    Reason.ACCOUNT_QUOTA: "the account's daily captures are used up",
    Reason.BLOCKED_CLIENT_IP: "the archive blocks this client's IP address",
}
# How many calls in a row may meet the service's trouble before the run takes it for out.
_OUT_AFTER = 3
# A job's status is kept about an hour by the service; an older one answers "pending" forever.
_JOB_MEMORY = timedelta(minutes=55)


def _host(url: str) -> str:
    """The host the archive pauses, as it names it: the name, and a port only when one is written
    (not `fetch.host_key`, which counts http and https of a name as two servers)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # a bad port: the submit will say so
        port = None
    return (parts.hostname or "").lower() + (f":{port}" if port else "")


def waits_for_service(state: ArchiveState) -> bool:
    """Whether a source the run left failed failed for the account's or the service's trouble (an
    earlier version did that): such a source goes back to waiting."""
    return state.status == ArchiveStatus.FAILED and state.reason not in SOURCE_FAILS | SOURCE_TROUBLE


@dataclass
class Step:
    """The new state of one source, and what to report."""

    state: ArchiveState
    archived: str | None
    outcome: CaptureOutcome


def _captured(state: ArchiveState, capture: ArchivedUrl, *, outcome: CaptureOutcome, confirmed: bool, url: str) -> Step:
    original = capture.original
    confirming = outcome == CaptureOutcome.CONFIRMED
    new = state.model_copy(
        update={
            "status": ArchiveStatus.CAPTURED,
            "reason": None,
            "detail": None,
            "job_id": None,
            "job_submitted_at": None,
            "captured_at": state.captured_at if confirming and state.captured_at else utc_now(),
            "reused": outcome == CaptureOutcome.REUSED or (state.reused and confirming),
            "confirmed": confirmed,
            # A redirect made the capture's URL differ from the source's: keep both.
            "captured_url": original if original != url else None,
        }
    )
    return Step(new, str(capture), outcome)


def _from_row(state: ArchiveState, row: CdxRow, *, outcome: CaptureOutcome, url: str) -> Step:
    return _captured(state, row.archived_url, outcome=outcome, confirmed=True, url=url)


def _waiting(state: ArchiveState, reason: Reason, detail: str | None = None, **update: object) -> Step:
    """Waiting for a later run: the account's or the service's trouble uses no attempt."""
    return Step(
        state.model_copy(update={"status": ArchiveStatus.PENDING, "reason": reason, "detail": detail, **update}),
        None,
        CaptureOutcome.WAITING,
    )


def _failed(state: ArchiveState, reason: Reason, detail: str | None = None) -> Step:
    update = {
        "status": ArchiveStatus.FAILED,
        "reason": reason,
        "detail": detail,
        "job_id": None,
        "job_submitted_at": None,
    }
    return Step(state.model_copy(update=update), None, CaptureOutcome.FAILED)


def _attempted(state: ArchiveState, reason: Reason, detail: str | None, max_attempts: int) -> Step:
    """The source's server misbehaved: an attempt used; failed after the last one."""
    attempts = state.attempts + 1
    update = {"attempts": attempts, "last_attempt_at": utc_now(), "job_id": None, "job_submitted_at": None}
    if attempts >= max_attempts:
        return _failed(state.model_copy(update=update), reason, detail)
    return _waiting(state.model_copy(update=update), reason, detail)


class _Sessions:
    """The account's capture sessions, as `/save/status/user` says and this run's jobs use them."""

    def __init__(self, client: WaybackClient, most: int, read_every_s: float) -> None:
        self.client, self.most = client, most
        self.read_every_s = read_every_s  # while none is free: as often as a job is looked at
        self.free = 0
        self.ours = 0
        self.submitting = 0  # sessions taken whose submit the service has not answered yet
        self.answered = 0  # submits answered so far
        self.read_at = float("-inf")
        self.changed = asyncio.Event()
        self.quota_used: str | None = None  # "n of n": the account's daily captures, all made
        # One read at a time: a thousand sources waiting for a session would otherwise each ask at
        # once, queueing a thousand looks behind the polls' rate (and the jobs' polls behind them).
        self._reading = asyncio.Lock()

    async def read(self, *, unless_since: float | None = None) -> None:
        """Read the account's sessions; with `unless_since`, not when another read ended after it."""
        async with self._reading:
            if unless_since is not None and self.read_at > unless_since:
                return
            await self._read()

    async def _read(self) -> None:
        answered = self.answered
        status = await self.client.user_status()
        self.read_at = time.monotonic()
        if status.daily_captures_limit and status.daily_captures >= status.daily_captures_limit:
            self.quota_used = f"{status.daily_captures} of {status.daily_captures_limit}"
        # `available` counts the account's jobs, this run's included, but only those the service
        # had taken when it answered: a submit still on its way, or answered meanwhile, may not
        # be in it, and counting its session free would earn a refusal. `most` is this run's bound.
        unsure = self.submitting + (self.answered - answered)
        self.free = max(0, min(status.available - unsure, self.most - self.ours))

    async def take(self, until: float) -> bool:
        """A session for one job, waited for until `until` (monotonic); False when none freed in time."""
        while True:
            if self.free > 0:
                self.free -= 1
                self.ours += 1
                self.submitting += 1
                return True
            now = time.monotonic()
            if now >= until or self.client.out is not None:
                return False
            if now - self.read_at >= self.read_every_s:
                await self.read(unless_since=now - self.read_every_s)
                continue
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), timeout=min(self.read_every_s, until - now))
            except TimeoutError:
                pass

    def not_used(self) -> None:
        """A session taken for a submit that will not be made after all."""
        self.submitting -= 1
        self.give_back(job_ended=False)

    def submit_answered(self) -> None:
        self.submitting -= 1
        self.answered += 1

    def give_back(self, *, job_ended: bool) -> None:
        """A job ended (its session is free again), or no job was started after all."""
        self.ours -= 1
        if job_ended:
            self.read_at = float("-inf")  # read again before the next: the account's count moved
        else:
            self.free += 1
        self.changed.set()

    def refused(self) -> None:
        """The service said every session is busy: believe it, and read again before the next."""
        self.free = 0
        self.read_at = time.monotonic()


Save = Callable[[str | None, str, Step], Awaitable[None]]


class Archiver:
    """One archive run's captures: its client, its sessions, and what it knows of the service."""

    def __init__(self, settings: Settings, client: WaybackClient, save: Save) -> None:
        self.settings, self.client, self.save = settings, client, save
        self.sessions = _Sessions(client, settings.capture_sessions, settings.poll_interval_s)
        self.out: Reason | None = None if client.has_keys else Reason.NO_KEYS
        self.paused_hosts: set[str] = set()
        self._trouble = 0  # calls in a row that met the service's trouble
        self.unreachable = False  # so many calls in a row found no service that this run asks no more
        self._started = time.monotonic()

    # ------------------------------------------------------------ what the run knows of the service

    def stop_submitting(self, reason: Reason, why: str) -> None:
        """The account or the service is out: no more submits this run (said once)."""
        if self.out is None:
            _log.warning("archive: %s; captures stop for this run, the sources wait for the next", why)
            self.out = reason

    def _service_trouble(self, exc: WaybackError) -> Reason:
        """A call met the service's trouble: its reason; after a few in a row, the service is out.

        A call not made (the run's deadline, or the archive already known out) and the client's own
        congestion are no answer of the service's: they count toward nothing."""
        if self.client.out is not None:
            self._unreachable(self.client.out)
            return Reason.SERVICE_UNREACHABLE
        if isinstance(exc, WaybackNotAsked | WaybackCongested):
            return Reason.NOT_TRIED
        self._trouble += 1
        # Only connections refused (or closed unanswered), tried and tried again, say the archive is
        # not there; an answer cut off, none in time or a 5xx is its passing trouble (the client asked
        # again already): the source waits, and the run goes on.
        reason = (
            Reason.THROTTLED
            if isinstance(exc, WaybackThrottled)
            else Reason.SERVICE_UNREACHABLE
            if isinstance(exc, WaybackUnavailable) and exc.unreached
            else Reason.SERVICE_ERROR
        )
        if self._trouble >= _OUT_AFTER and reason == Reason.SERVICE_UNREACHABLE:
            self.client.give_up(f"the archive cannot be reached ({exc})")
            self._unreachable(self.client.out or str(exc))
        return reason

    def _unreachable(self, why: str) -> None:
        """The archive is out for this run: said once, and no call more (the client asks nothing)."""
        if self.unreachable:
            return
        # Even without keys (lookups only), every further call would wait out the breaker for nothing.
        self.unreachable = True
        if self.out is None:
            self.stop_submitting(Reason.SERVICE_UNREACHABLE, why)
        else:
            _log.warning("archive: %s; the sources wait for the next run", why)

    def note_out(self) -> None:
        """Say once that the archive is out, when a call made outside this archiver found it so."""
        if self.client.out is not None:
            self._unreachable(self.client.out)

    @property
    def ended(self) -> bool:
        """Whether this run asks the archive no more: it is out, or the run's deadline has come."""
        return self.unreachable or self.client.out is not None or self.client.seconds_left() <= 0

    def _service_answered(self) -> None:
        self._trouble = 0

    async def check_account(self) -> None:
        """Before the first submit: the keys, the account's sessions, the shared capture limit."""
        if self.out is not None:
            return
        try:
            await self.sessions.read()
            self._service_answered()
        except WaybackAuthError as exc:
            self.stop_submitting(Reason.BAD_KEYS, str(exc))
        except WaybackError as exc:
            if self._service_trouble(exc) != Reason.SERVICE_UNREACHABLE or not self.unreachable:
                _log.warning("archive: could not read the account's sessions: %s", exc)
        if self.settings.capture_limit and self.out is None:
            from pipeline.wayback import capture_limit_problem

            problem = await capture_limit_problem(self.settings.capture_limit)
            if problem:
                self.stop_submitting(Reason.NO_CAPTURE_LIMIT, problem)

    # ------------------------------------------------------------ the index

    async def newest(self, url: str, since: datetime) -> CdxRow | None:
        """The newest capture of a page of `url` the index holds since a moment (never a redirect's
        row nor a revisit of one, nor a row whose original is no URL); None when it holds none or
        cannot say.

        What the run needs is a capture made since the moment (a reuse window, a submit), and any
        readable one serves: a row that could not be read, maybe newer, does not make it older.
        A revisit since the moment repeats a capture maybe made before it, which this lookup does
        not hold: one lookup more, of that URL's rows up to the revisit with its digest, says what
        it repeats (a page, or a redirect: no page). Unsaid (the index out), it is no page.
        Where the newest itself matters (refresh), `CdxResult.newest` says when it cannot be told."""
        row, _ = await self._since(url, since)
        return row

    async def _since(self, url: str, since: datetime) -> tuple[CdxRow | None, bool]:
        """`newest`, and whether the index holds any row of `url` since the moment, a page's or not."""
        found = await self._index(url, since=since.strftime("%Y%m%d%H%M%S"))
        if found is None:
            return None, False
        unresolved = found.unresolved(url)
        if unresolved:
            digests = {row.digest for row in unresolved}
            earlier = await self._index(url, since=None, until=unresolved[-1].timestamp, digests=digests)
            if earlier is not None:
                found.resolve(earlier)
        return found.newest_readable(url), bool(found.rows_for(url))

    async def capture_at(self, url: str, timestamp: str) -> CdxRow | None:
        """The capture of `url` at `timestamp`, if the index shows it yet."""
        found = await self._index(url, since=timestamp, until=timestamp)
        return next((row for row in found.rows_for(url) if row.timestamp == timestamp), None) if found else None

    async def _index(
        self, url: str, *, since: str | None, until: str | None = None, digests: frozenset[str] | set[str] = frozenset()
    ) -> CdxResult | None:
        if self.unreachable:
            return None  # each call would wait out the breaker's pause for nothing
        try:
            found = await self.client.index(url, since=since, until=until, digests=digests)
        except WaybackError as exc:
            self._service_trouble(exc)
            return None
        self._service_answered()
        return found

    # ------------------------------------------------------------ one source

    async def capture_source(self, draft_id: str | None, url: str, state: ArchiveState, recorded: str | None) -> Step:
        """The source's next step to a confirmed capture (see the module's docstring)."""
        s = self.settings
        if self.ended:
            if self.client.out is not None:
                self._unreachable(self.client.out)
            if recorded and state.status == ArchiveStatus.CAPTURED:
                return Step(state, recorded, CaptureOutcome.UNCONFIRMED)
            if self.unreachable:
                return _waiting(state, Reason.SERVICE_UNREACHABLE)
            return _waiting(state, state.reason or Reason.NOT_TRIED)  # the run's deadline: the next run
        # 1. captured, not yet seen in the index: confirm that very capture, not another.
        if state.status == ArchiveStatus.CAPTURED and recorded:
            stamp = snapshot_timestamp(recorded)
            row = await self.capture_at(state.captured_url or url, stamp) if stamp else None
            if row is not None:
                return _from_row(state, row, outcome=CaptureOutcome.CONFIRMED, url=url)
            return Step(state, recorded, CaptureOutcome.UNCONFIRMED)
        # 2. a job an earlier run left: poll it while the service remembers it; after, look in the index.
        if state.job_submitted_at:
            if state.job_id and utc_now() - state.job_submitted_at < _JOB_MEMORY:
                return await self.poll(draft_id, url, state)
            row = await self.newest(url, state.job_submitted_at - timedelta(minutes=1))
            if row is not None:
                return _from_row(state, row, outcome=CaptureOutcome.CAPTURED, url=url)
            state = state.model_copy(update={"job_id": None, "job_submitted_at": None})
        # 3. an existing capture young enough: reuse it.
        if s.reuse_capture_within_s:
            row, held = await self._since(url, utc_now() - timedelta(seconds=s.reuse_capture_within_s))
            if row is not None:
                return _from_row(state, row, outcome=CaptureOutcome.REUSED, url=url)
            if held:
                # The window holds captures of the URL but none of a page (a redirect's, a revisit of
                # one): `if_not_archived_within` would count them and capture nothing, so the source
                # would wait until they left the window. Ask for a capture outright.
                return await self.capture(draft_id, url, state, not_within_s=None)
        return await self.capture(draft_id, url, state, not_within_s=s.reuse_capture_within_s or None)

    async def capture(
        self,
        draft_id: str | None,
        url: str,
        state: ArchiveState,
        *,
        not_within_s: float | None,
        newer_than: str | None = None,
    ) -> Step:
        """Submit `url` and see the job to its end. Without `not_within_s` the archive is asked for a
        new capture (a refresh of a page that changed); a capture no newer than `newer_than` (the
        one the page was recorded with) is then no new one, and the source waits."""
        host = _host(url)
        if self.out is not None:
            return _waiting(state, self.out)
        if host in self.paused_hosts:
            return _waiting(state, Reason.HOST_QUOTA)
        until = min(self._started + self.settings.session_wait_s, self.client.deadline)
        while True:
            if not await self.sessions_or_out(until):
                return _waiting(state, self.out or Reason.USER_SESSION_LIMIT)
            if host in self.paused_hosts:  # paused while this one waited for a session
                self.sessions.not_used()
                return _waiting(state, Reason.HOST_QUOTA)
            step = await self._submit(draft_id, url, state, not_within_s=not_within_s, newer_than=newer_than)
            if step is not None:
                return step
            # The service said every session was busy: wait for one to free, no attempt used.

    async def sessions_or_out(self, until: float) -> bool:
        """A session for one submit; False when none freed in time, or the account or service is out."""
        try:
            took = self.out is None and await self.sessions.take(until)
        except WaybackAuthError as exc:
            self.stop_submitting(Reason.BAD_KEYS, str(exc))
            return False
        except WaybackError as exc:
            self._service_trouble(exc)
            return False
        if self.sessions.quota_used:  # the account says so before a submit is refused for it
            self.stop_submitting(
                Reason.ACCOUNT_QUOTA, f"the account's daily captures are used up ({self.sessions.quota_used})"
            )
        if took and self.out is not None:  # the account or the service went out while this one waited
            self.sessions.not_used()
            return False
        return took

    async def _submit(
        self, draft_id: str | None, url: str, state: ArchiveState, *, not_within_s: float | None, newer_than: str | None
    ) -> Step | None:
        """One submit with a session held; None when the service said every session was busy."""
        submitted_at = utc_now()
        # Durable before the request: a run killed while the archive answers looks for the
        # capture next time instead of making a second one.
        state = state.model_copy(
            update={"job_id": None, "job_submitted_at": submitted_at, "reason": Reason.SUBMITTING, "detail": None}
        )
        await self.save(draft_id, url, Step(state, None, CaptureOutcome.WAITING))
        try:
            try:
                answer = await self.client.submit(url, not_within_s=not_within_s)
            finally:
                self.sessions.submit_answered()
            self._service_answered()
        except (WaybackAuthError, CaptureLimitError) as exc:
            self.sessions.give_back(job_ended=False)
            reason = Reason.NO_CAPTURE_LIMIT if isinstance(exc, CaptureLimitError) else Reason.BAD_KEYS
            self.stop_submitting(reason, str(exc))
            return _waiting(state, reason, job_submitted_at=None)
        except WaybackError as exc:
            self.sessions.give_back(job_ended=False)
            reason = self._service_trouble(exc)
            # Ambiguous: the capture may have gone through. Look before anything else.
            row = await self.newest(url, submitted_at - timedelta(minutes=1))
            if row is not None:
                return _from_row(state, row, outcome=CaptureOutcome.CAPTURED, url=url)
            return _waiting(state, reason, str(exc)[:300])
        if answer.error is not None:
            return await self._refused(url, state, answer.error, answer.detail, submitted_at)
        if answer.job_id is None:
            self.sessions.give_back(job_ended=False)
            # A capture younger than if_not_archived_within exists; the index may not show it yet.
            window = not_within_s or self.settings.reuse_capture_within_s or 86400
            row = await self.newest(url, submitted_at - timedelta(seconds=window))
            if row is not None:
                return _from_row(state, row, outcome=CaptureOutcome.REUSED, url=url)
            return _waiting(state, Reason.CAPTURE_NOT_YET_VISIBLE, job_submitted_at=None)
        # Durable before anything else: a run killed now polls this job next time.
        reason = Reason.CAPTURE_DELAYED if answer.delayed else Reason.JOB_SUBMITTED
        submitted = state.model_copy(
            update={"job_id": answer.job_id, "job_submitted_at": submitted_at, "reason": reason, "detail": None}
        )
        await self.save(draft_id, url, Step(submitted, None, CaptureOutcome.WAITING))
        try:
            step = await self.poll(draft_id, url, submitted, newer_than=newer_than)
        finally:
            self.sessions.give_back(job_ended=True)
        if answer.earlier and step.outcome == CaptureOutcome.CAPTURED:
            # The service answered with its capture of the last hour instead of making one.
            step.outcome = CaptureOutcome.REUSED
            step.state = step.state.model_copy(update={"reused": True})
        return step

    async def _refused(
        self, url: str, state: ArchiveState, reason: Reason, detail: str | None, submitted_at: datetime
    ) -> Step | None:
        """The submit was answered with an error: whose trouble it is decides the source's state."""
        self.sessions.give_back(job_ended=False)
        if reason == Reason.USER_SESSION_LIMIT:
            self.sessions.refused()
            return None
        if reason == Reason.TOO_MANY_DAILY_CAPTURES:  # "already captured today": find today's capture
            row = await self.newest(url, submitted_at.replace(hour=0, minute=0, second=0, microsecond=0))
            if row is not None:
                return _from_row(state, row, outcome=CaptureOutcome.REUSED, url=url)
            return _waiting(state, Reason.CAPTURED_TODAY_NOT_YET_VISIBLE, job_submitted_at=None)
        return self._judged(url, state, reason, detail)

    def _judged(self, url: str, state: ArchiveState, reason: Reason, detail: str | None) -> Step:
        """A job's or a submit's error, by whose trouble it is (`judgement`)."""
        judged = judgement(reason)
        if judged == "fails":
            return _failed(state, reason, detail)
        if judged == "attempt":
            return _attempted(state, reason, detail, self.settings.max_capture_attempts)
        if judged == "stops submitting":
            why = _OUT_WHY.get(reason, "the archive refuses this account's captures")
            self.stop_submitting(reason, f"{why} ({detail})" if detail else why)
        elif judged == "pauses the host" and _host(url) not in self.paused_hosts:
            self.paused_hosts.add(_host(url))
            _log.warning("archive: captures of %s are paused by the archive; its sources wait", _host(url))
        return _waiting(state, reason, detail, job_id=None, job_submitted_at=None)

    async def poll(self, draft_id: str | None, url: str, state: ArchiveState, *, newer_than: str | None = None) -> Step:
        """Look at the source's job (`state.job_id`, submitted at `state.job_submitted_at`) until it
        ends, more seldom as it ages; still pending at the run's patience, it is kept for the next
        run (`submitted`)."""
        job_id, submitted_at = state.job_id, state.job_submitted_at
        if job_id is None or submitted_at is None:
            raise ValueError(f"{url}: no job to poll")  # a bug: a job is polled only once its state keeps it
        s = self.settings
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(s.poll_timeout_s, self.client.seconds_left())  # no later than the run's own
        wait = s.poll_interval_s
        while True:
            if not await self.client.sleep(min(wait, max(0.0, deadline - loop.time()))) or self.ended:
                # The archive out, or the run's deadline: the job is kept, the next run polls it.
                return Step(state.model_copy(update={"reason": Reason.JOB_PENDING}), None, CaptureOutcome.SUBMITTED)
            wait = min(wait * 1.5, s.poll_max_interval_s)
            job: JobState | None
            try:
                job = await self.client.job(job_id)
                self._service_answered()
            except WaybackAuthError as exc:
                self.stop_submitting(Reason.BAD_KEYS, str(exc))
                return Step(state, None, CaptureOutcome.SUBMITTED)
            except WaybackError as exc:  # throttled, unavailable or unreadable: look again after a pause
                self._service_trouble(exc)
                job = None
            if job is not None and job.status == "success" and job.timestamp:
                original = job.original_url or url
                if job.http_status is not None and job.http_status >= 400:
                    return self._judged(url, state, archived_status_reason(job.http_status), f"HTTP {job.http_status}")
                if newer_than is not None and job.timestamp <= newer_than:
                    # The archive answered with a capture no newer than the recorded one.
                    return _waiting(state, Reason.CAPTURE_NOT_NEWER, job.timestamp, job_id=None, job_submitted_at=None)
                # Recorded now; the index may show it only later, when a pass confirms it.
                capture = ArchivedUrl(self.settings.wayback_public_url, job.timestamp, "", original)
                return _captured(state, capture, outcome=CaptureOutcome.CAPTURED, confirmed=False, url=url)
            if job is not None and job.status == "error":
                return self._judged(url, state, job.error or Reason.SERVICE_ERROR, job.detail)
            expired = utc_now() - submitted_at >= _JOB_MEMORY
            if expired or loop.time() >= deadline:
                if expired:  # the service forgot the job: did it capture?
                    row = await self.newest(url, submitted_at - timedelta(minutes=1))
                    if row is not None:
                        return _from_row(state, row, outcome=CaptureOutcome.CAPTURED, url=url)
                    return _waiting(state, Reason.JOB_EXPIRED, job_id=None, job_submitted_at=None)
                return Step(state.model_copy(update={"reason": Reason.JOB_PENDING}), None, CaptureOutcome.SUBMITTED)
