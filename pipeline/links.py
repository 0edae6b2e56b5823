"""Keeping archived links current: every source of every draft and case, checked again.

    report = refresh(store, settings)

For each source URL (once, however many records cite it):
1. the live page, by a conditional request: ok, moved (a redirect: `moved_to`), gone
   (404, 410), blocked (401, 403: often a bot block, not a dead page), or an error;
2. its captures, from the index (CDX): one prefix query for the URLs that share a
   folder on a host, so a thousand sources cost tens of requests, not a thousand;
3. whether the live page really changed since its newest capture, by comparing the
   normalised extracted text of both (dynamic pages differ byte for byte on every load);
   when the index lags behind the recorded capture (or lacks the URL), with that capture
   itself, by its playback. A page is `unchanged` only after such a comparison; one that
   could not be compared waits (`capture-not-indexed`, `capture-unreadable`);
4. a new capture when it changed, or when there is none (never of a dead page, nor of
   one that moved: that needs a person to update the source, and keeps its capture);
5. `archived` set to the newest good capture in every draft and case citing the URL. A
   gone page keeps its capture: an archived link is never dropped.

What it found is kept per URL in `.incidentlib/links.json` (see `incidentlib links`).
The fetcher's politeness, the archive's rate limiters and its breaker apply as in the
crawl and the archive runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from pipeline import interrupt
from pipeline.batch import Report, each, raise_unexpected, tally
from pipeline.capture import Archiver, CaptureOutcome, Step
from pipeline.errors import ArchivedErrorPage, ExtractError, InvalidRecord, WaybackError, WaybackExcluded
from pipeline.extract import decode_text, extract
from pipeline.fetch import Fetcher, FetchResult, fetch_url_for
from pipeline.ids import canonical_url
from pipeline.models import ArchiveState, ArchiveStatus, Case, Draft, LinkState, LinkStatus, utc_now
from pipeline.reasons import Reason
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.wayback import ArchivedUrl, CdxRow, WaybackClient, snapshot_timestamp

__all__ = ["LinkReport", "RefreshReport", "links", "refresh"]

# waiting: the archive could not say or capture this time (its trouble, or a capture made within
# its dedupe hour); nothing was decided, the next refresh tries again.
Outcome = Literal["unchanged", "re-archived", "moved", "gone", "blocked", "waiting", "failed"]
_log = logging.getLogger("incidentlib.links")
_GONE = (Reason.HTTP_404, Reason.HTTP_410)
_BLOCKED = (Reason.HTTP_401, Reason.HTTP_403)


@dataclass
class LinkReport:
    url: str
    outcome: Outcome
    status: str
    archived: str | None = None
    moved_to: str | None = None
    reason: Reason | None = None


@dataclass
class RefreshReport(Report):
    SHOWN = ("counts", "requests", "records_updated", "seconds", "archive_out", "sources")

    sources: list[LinkReport] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)
    records_updated: int = 0
    seconds: float = 0.0  # how long the checks took, from the archive client's start to the last link
    archive_out: bool = False  # the archive could not be reached: this run asked it no more (said once)
    errors: list[Exception] = field(default_factory=list)  # unexpected: bugs to raise once reported

    def counts(self) -> dict[str, int]:
        return {"checked": len(self.sources), **tally((s.outcome for s in self.sources), Outcome)}


def _normalised_sha(body: bytes, url: str, content_type: str | None) -> str:
    """A hash of what a reader sees of a page: its extracted text, case and spacing folded."""
    try:
        text = extract(body, url, content_type).text
    except ExtractError:
        try:
            text = decode_text(body, content_type, url)
        except ExtractError:
            text = body.hex()
    return hashlib.sha256(" ".join(text.casefold().split()).encode()).hexdigest()


def _cited(store: Store) -> tuple[dict[str, list[str]], dict[str, set[str]]]:
    """Every source URL: the drafts citing it, and its archived links in drafts and cases."""
    drafts: dict[str, list[str]] = defaultdict(list)
    archived: dict[str, set[str]] = defaultdict(set)
    records: list[Draft | Case] = []
    for kind, read in (("draft", store.read_draft), ("case", store.read_case)):
        for record_id in store.ids(kind):  # type: ignore[arg-type]
            try:
                records.append(read(record_id))
            except InvalidRecord as exc:  # one bad record costs only its own links
                _log.warning("refresh: %s skipped: %s", record_id, exc)
    for record in records:
        for source in record.sources:
            if isinstance(record, Draft):
                drafts[source.url].append(record.id)
            else:
                drafts.setdefault(source.url, [])
            if source.archived:
                archived[source.url].add(source.archived)
    return dict(drafts), dict(archived)


def _folder(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path.rsplit('/', 1)[0]}/"


def _live_status(url: str, live: FetchResult) -> tuple[LinkStatus, str | None]:
    if live.outcome == "failed":
        if live.reason in _GONE:
            return LinkStatus.GONE, None
        if live.reason in _BLOCKED:
            return LinkStatus.BLOCKED, None
        return LinkStatus.ERROR, None
    final = live.final_url or url
    if canonical_url(final) != canonical_url(fetch_url_for(url)):
        return LinkStatus.MOVED, final
    return LinkStatus.OK, None


@dataclass(frozen=True)
class _Indexed:
    """What the index holds for one URL: its rows, its newest readable capture of a page, the links
    of its rows that are no page (a redirect, a revisit of one: never a link to keep), and whether a
    row that could not be read may be newer than that capture (then which is newest is not known)."""

    rows: list[CdxRow]
    newest: CdxRow | None
    no_pages: frozenset[str]
    unreadable: bool


@dataclass(frozen=True)
class _Compared:
    """The capture the live page is compared with: a row of the index, or a recorded link."""

    timestamp: str
    original: str
    link: str

    @classmethod
    def of_row(cls, row: CdxRow) -> _Compared:
        return cls(row.timestamp, row.original, row.link)

    @classmethod
    def of_link(cls, link: str) -> _Compared | None:
        """A recorded `<base>/web/<timestamp>/<url>` link's capture; None for a link of another shape."""
        archived = ArchivedUrl.parse(link)
        if archived is None or archived.flags or not archived.original:
            return None
        return cls(archived.stamp, archived.original, link)


class _Refresher:
    def __init__(self, store: Store, settings: Settings, fetcher: Fetcher, client: WaybackClient) -> None:
        self.store, self.settings, self.fetcher, self.client = store, settings, fetcher, client
        # No draft's archive state is touched by a refresh's captures: the newest link is
        # written to every record citing the URL at the end.
        self.archiver = Archiver(settings, client, _keep_nothing)
        # Per URL: what the index holds of it, or why that is not known.
        self.rows: dict[str, _Indexed | Reason] = {}
        self.lookups: dict[str, asyncio.Task[None]] = {}  # by folder: its lookup, done or under way

    def start_index(self, urls: list[str]) -> None:
        """Start the lookups of every folder (see `index`): each source goes on once its own folder's
        lookup is in, so captures need not wait for the last folder's turn of the index's rate."""
        by_folder: dict[str, list[str]] = defaultdict(list)
        for url in urls:
            by_folder[_folder(url)].append(url)
        for folder, members in by_folder.items():
            self.lookups[folder] = asyncio.ensure_future(self.index(members))

    async def rows_of(self, url: str) -> _Indexed | Reason:
        lookup = self.lookups.get(_folder(url))
        if lookup is not None:
            await asyncio.shield(lookup)
        return self.rows.get(url, Reason.INDEX_UNAVAILABLE)

    async def index(self, urls: list[str]) -> None:
        """The captures of every URL, in as few index (CDX) requests as the API allows: one prefix
        lookup for the URLs that share a folder, matched to each URL by its SURT key."""
        by_folder: dict[str, list[str]] = defaultdict(list)
        for url in urls:
            by_folder[_folder(url)].append(url)

        async def one_folder(folder: str, members: list[str]) -> None:
            try:
                found = (
                    await self.client.index(members[0])
                    if len(members) == 1
                    else await self.client.index(folder, prefix=True)
                )
            except WaybackError:
                for url in members:
                    self.rows[url] = Reason.INDEX_UNAVAILABLE  # unknown this time: nothing is decided from it
                return
            for url in members:
                if found.blocked:
                    self.rows[url] = Reason.BLOCKED_SITE
                    continue
                rows = found.rows_for(url)
                no_pages = frozenset(r.link for r in rows if not found.is_page(r))
                # A row that could not be read may be newer than the newest readable page: the page
                # is still compared with that one, and the report says so (docs/archive.md).
                self.rows[url] = _Indexed(rows, found.newest_readable(url), no_pages, not found.readable(url))

        await asyncio.gather(*(one_folder(folder, members) for folder, members in by_folder.items()))

    async def one(
        self, url: str, draft_ids: list[str], recorded: set[str], previous: LinkState | None
    ) -> tuple[LinkReport, LinkState]:
        report, state = await self._check(url, recorded, previous)
        known = self.rows.get(url)
        if isinstance(known, _Indexed) and known.unreadable:
            # An index row, not the source's answer: nothing is failed for it. Unchanged against the
            # newest readable page, the page waits (that row may be newer); the reason says it is there.
            if report.outcome == "unchanged":
                report.outcome = "waiting"
            report.reason = report.reason or Reason.INDEX_ROW_UNREADABLE
        return report, state

    async def _check(self, url: str, recorded: set[str], previous: LinkState | None) -> tuple[LinkReport, LinkState]:
        # Validators only after a comparison: a 304 then means the page is still the text compared.
        before = (
            previous
            if previous is not None
            and previous.status == LinkStatus.OK
            and previous.text_sha is not None
            and previous.capture_text_sha is not None
            else None
        )
        live = await self.fetcher.fetch(
            url, etag=before.etag if before else None, last_modified=before.last_modified if before else None
        )
        status, moved_to = _live_status(url, live)
        known = await self.rows_of(url)
        rows, newest = (None, None) if isinstance(known, Reason) else (known.rows, known.newest)
        if not isinstance(known, Reason):
            recorded = recorded - known.no_pages  # a link to a redirect's row is never the one to keep
        best_recorded = _newest_recorded(recorded)
        if best_recorded and rows is not None and not any(r.link == best_recorded for r in rows):
            # Not in the index: does the recorded link still lead to a capture?
            if not await self.client.resolves(best_recorded):
                recorded = recorded - {best_recorded}
                best_recorded = _newest_recorded(recorded)
        lagging = best_recorded is not None and (newest is None or _timestamp(best_recorded) > newest.timestamp)
        if lagging:
            newest = None  # the index lags behind what is recorded: links only ever move forward
        # What the live page is compared with: the newest capture the index shows, or, when the index
        # lags behind the recorded link (or lacks the URL), that recorded capture itself, by its playback.
        compared = _Compared.of_row(newest) if newest else _Compared.of_link(best_recorded) if best_recorded else None
        state = LinkState(
            url=url,
            checked_at=utc_now(),
            status=status,
            http_status=live.status,
            moved_to=moved_to,
            reason=live.reason if status == LinkStatus.ERROR else None,
            etag=live.etag if live.outcome == "fetched" else (previous.etag if previous else None),
            last_modified=live.last_modified
            if live.outcome == "fetched"
            else (previous.last_modified if previous else None),
            text_sha=previous.text_sha if previous else None,
            archived=newest.link if newest else (best_recorded or (previous.archived if previous else None)),
            capture_text_sha=previous.capture_text_sha
            if previous and compared and previous.archived == compared.link
            else None,
        )
        if status in (LinkStatus.GONE, LinkStatus.BLOCKED, LinkStatus.ERROR) or rows is None:
            # Never capture a dead or unreadable page; without the index this time, decide nothing.
            outcome: Outcome = (
                "gone"
                if status == LinkStatus.GONE
                else "blocked"
                if status == LinkStatus.BLOCKED
                else "waiting"
                if known == Reason.INDEX_UNAVAILABLE and status != LinkStatus.ERROR
                else "failed"
            )
            reason = state.reason or (known if isinstance(known, Reason) else None)
            state = state.model_copy(update={"archived": state.archived or _newest_recorded(recorded)})
            return LinkReport(url, outcome, status.value, state.archived, moved_to, reason), state

        changed = compared is None
        live_sha = await _live_sha(url, live, state.text_sha)
        if compared is not None and live_sha is not None:
            state = state.model_copy(update={"text_sha": live_sha})
            capture_sha = state.capture_text_sha
            if capture_sha is None:
                read = await self.capture_sha(compared, exact=lagging)
                if read == Reason.CAPTURE_UNREADABLE and lagging:
                    read = Reason.CAPTURE_NOT_INDEXED  # not in the index, and playback cannot show it yet
                if isinstance(read, Reason):
                    # Excluded from playback: the source's own for good, and its link is not moved
                    # to a capture no reader can see. Unreadable now: the next refresh tries again.
                    excluded = read == Reason.BLOCKED_SITE
                    link = (best_recorded or (previous.archived if previous else None)) if excluded else state.archived
                    state = state.model_copy(update={"archived": link})
                    outcome = "failed" if excluded else "waiting"
                    # Not compared: the validators go, so that the next refresh reads the page whole.
                    state = state.model_copy(update={"etag": None, "last_modified": None})
                    return LinkReport(url, outcome, status.value, state.archived, moved_to, read), state
                capture_sha = read
                state = state.model_copy(update={"capture_text_sha": capture_sha})
            # A capture of an error page (no hash) is no copy of a live page that answers.
            changed = capture_sha is None or live_sha != capture_sha
        if status == LinkStatus.MOVED:
            # The page lives elsewhere now: a person should update the source; its capture stays.
            return LinkReport(url, "moved", status.value, state.archived, moved_to), state
        if not changed:
            if state.text_sha is None or state.capture_text_sha is None:
                # Never `unchanged` without a comparison of the live text with a capture's: the page
                # waits, its validators dropped so that the next refresh reads it whole.
                state = state.model_copy(update={"etag": None, "last_modified": None})
                reason = Reason.CAPTURE_NOT_INDEXED if lagging else Reason.CAPTURE_UNREADABLE
                return LinkReport(url, "waiting", status.value, state.archived, moved_to, reason), state
            return LinkReport(url, "unchanged", status.value, state.archived, moved_to), state

        # A new capture, not one the archive already holds: only one newer than the newest known counts.
        known_stamp = max(
            filter(None, (newest.timestamp if newest else None, _timestamp(best_recorded or ""))), default=None
        )
        step = await self.archiver.capture(None, url, ArchiveState(), not_within_s=None, newer_than=known_stamp)
        if step.archived is None:
            reason = step.state.reason or Reason.CAPTURE_FAILED
            outcome = "failed" if step.outcome == CaptureOutcome.FAILED else "waiting"
            # Keep the old validators: a 304 next time must not hide a change still not captured.
            kept = {"etag": previous.etag, "last_modified": previous.last_modified} if previous else {}
            state = state.model_copy(update={"etag": None, "last_modified": None, **kept})
            return LinkReport(url, outcome, status.value, state.archived, moved_to, reason), state
        state = state.model_copy(update={"archived": step.archived, "capture_text_sha": state.text_sha})
        return LinkReport(url, "re-archived", status.value, step.archived, moved_to), state

    async def capture_sha(self, capture: _Compared, *, exact: bool = False) -> str | Reason | None:
        """The hash of a capture's text, as `_normalised_sha` makes it of the live page;
        None when playback replays an error page (an archived 404, 429, 5xx: the page's history),
        BLOCKED_SITE when the archive excludes the URL from playback, CAPTURE_UNREADABLE when the
        capture cannot be read now (with `exact`, that very capture: not one nearest to it)."""
        try:
            body = await self.client.capture_bytes(capture.timestamp, capture.original, exact=exact)
        except ArchivedErrorPage:
            return None
        except WaybackExcluded:
            return Reason.BLOCKED_SITE
        except WaybackError:
            return Reason.CAPTURE_UNREADABLE
        return await asyncio.to_thread(_normalised_sha, body, capture.original, None)


async def _live_sha(url: str, live: FetchResult, last: str | None) -> str | None:
    """The hash of the live page's text: of the body read, or, when its server says it has not
    changed (304), the one last read (`last`); None when neither is at hand."""
    if live.outcome == "fetched" and live.body is not None:
        return await asyncio.to_thread(_normalised_sha, live.body, live.final_url or url, live.content_type)
    return last if live.outcome == "not_modified" else None


async def _keep_nothing(draft_id: str | None, url: str, step: Step) -> None:
    """A refresh keeps no draft's archive state while it captures (see `_update_records`)."""


def _timestamp(link: str) -> str:
    return snapshot_timestamp(link) or ""


def _newest_recorded(recorded: set[str]) -> str | None:
    return max(recorded, key=_timestamp) if recorded else None


def _update_records(store: Store, newest: dict[str, str], no_pages: dict[str, frozenset[str]]) -> int:
    """Set `archived` to the newest good capture wherever a record cites an older one (never a newer),
    or a link the index shows is no page (`no_pages`: a redirect's row), whatever its age."""

    def forward(source_url: str, archived: str | None) -> bool:
        link = newest.get(source_url)
        if link is None or link == archived:
            return False
        return archived is None or archived in no_pages.get(source_url, ()) or _timestamp(link) >= _timestamp(archived)

    touched: set[str] = set()

    def change(draft: Draft) -> Draft | None:
        if not any(forward(s.url, s.archived) for s in draft.sources):
            return None
        touched.add(draft.id)
        sources = []
        for s in draft.sources:
            if forward(s.url, s.archived):
                archive = s.archive.model_copy(
                    update={
                        "status": ArchiveStatus.CAPTURED,
                        "reason": None,
                        "job_id": None,
                        "job_submitted_at": None,
                        "captured_at": utc_now(),
                        "confirmed": False,
                    }
                )
                s = s.model_copy(update={"archived": newest[s.url], "archive": archive})
            sources.append(s)
        return draft.model_copy(update={"sources": sources})

    for draft_id in store.ids("draft"):
        try:
            store.update_draft(draft_id, change)
        except InvalidRecord as exc:
            _log.warning("refresh: %s: not updated: %s", draft_id, exc)
    written = len(touched)

    def change_case(case: Case) -> Case | None:
        if not any(forward(s.url, s.archived) for s in case.sources):
            return None
        # Like any edit: only the link and updated_at change, and the diff shows just that.
        sources = [
            s.model_copy(update={"archived": newest[s.url]}) if forward(s.url, s.archived) else s for s in case.sources
        ]
        return case.model_copy(update={"sources": sources, "updated_at": utc_now()})

    for case_id in store.ids("case"):
        try:
            if store.update_case(case_id, change_case):
                written += 1
        except InvalidRecord as exc:
            _log.warning("refresh: %s: not updated: %s", case_id, exc)
    return written


async def refresh_async(
    store: Store,
    settings: Settings,
    on_source: Callable[[LinkReport], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
) -> RefreshReport:
    drafts, recorded = _cited(store)
    if on_plan:
        on_plan(len(drafts))
    previous = store.state.read_links()
    report = RefreshReport()
    states: dict[str, LinkState] = {}
    async with Fetcher(settings) as fetcher, WaybackClient(settings) as client:
        refresher = _Refresher(store, settings, fetcher, client)
        refresher.start_index(list(drafts))

        async def one(url: str) -> LinkReport:
            source, states[url] = await refresher.one(url, drafts[url], recorded.get(url, set()), previous.get(url))
            return source

        def failed(url: str, exc: Exception) -> LinkReport:
            return LinkReport(url, "failed", "error", reason=Reason.INTERNAL_ERROR)

        report.sources, report.errors = await each(drafts, one, failed, on_source)
        report.requests = {**client.requests, "live": fetcher.requests}
        refresher.archiver.note_out()
        report.seconds = time.monotonic() - client.started
        report.archive_out = client.out is not None
        no_pages = {url: k.no_pages for url, k in refresher.rows.items() if isinstance(k, _Indexed) and k.no_pages}
    newest = {url: s.archived for url, s in states.items() if s.archived}
    report.records_updated = await asyncio.to_thread(_update_records, store, newest, no_pages)
    await asyncio.to_thread(store.state.update_links, states)
    return report


def refresh(
    store: Store,
    settings: Settings,
    on_source: Callable[[LinkReport], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
    *,
    raise_errors: bool = True,
) -> RefreshReport:
    """Check every source of every draft and case; see the module's docstring.

    `on_plan` hears how many links there are, before any is checked; `on_source` hears
    of each as it ends. Unexpected errors (bugs) are raised as one ExceptionGroup once
    every link has had its turn and the records are written (pipeline.batch); with
    `raise_errors=False` they stay in `report.errors`.
    """
    report = interrupt.run(refresh_async(store, settings, on_source, on_plan))
    if raise_errors:
        raise_unexpected(report.errors, "links")
    return report


def links(store: Store, status: LinkStatus | str | None = None) -> list[LinkState]:
    """What the last refresh found, optionally only the links in one LinkStatus (gone, blocked, ...).

    A status that is not a LinkStatus raises ValueError: a refresh's outcomes (`re-archived`,
    `failed`, ...) are not kept per link, and filtering on one would list nothing, silently.
    """
    wanted = None if status is None else LinkStatus(status)
    states = sorted(store.state.read_links().values(), key=lambda s: s.url)
    return [s for s in states if wanted is None or s.status == wanted]
