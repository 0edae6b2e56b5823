"""Discovery: the feeds of `sources/feeds.yaml` read, and the pages they list proposed as candidates.

    report = discover(store, settings)                  # every feed that is due
    report = discover(store, settings, ["github"])      # some feeds, by name or URL

Each feed is fetched by the crawl's Fetcher (robots.txt, per-host limits, the address guard, size
limits) with a conditional request: an unchanged feed (304, or the same bytes) costs nothing more.
Each entry keeps a fingerprint between runs, so only entries new or changed since the last reading
are looked at. An entry's page is then, by `same_page_key` (an archived link's original, `.html`
and a trailing slash alike):
- registered already: when its entry changed (a postmortem added to a status page's incident),
  the source is crawled again, or its draft rewritten from the feed's text;
- a candidate already: its title, date and text follow the feed; a dismissed one stays dismissed;
- new, and matching the feed's filters: a candidate in `sources/candidates.yaml`, or, for a feed
  with `auto_accept`, a registry entry in `sources/discovered.yaml` (`discovered_from` the feed).

Crash safety: the registry and the candidates are written before the feeds' fingerprints, so a run
that stops between the two sees the same entries as new next time, and finds them known.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pipeline import interrupt
from pipeline.batch import Report, each, raise_unexpected, tally, tally_reasons
from pipeline.crawl import CrawlReport, SourceReport, write_feed_text
from pipeline.errors import Fault, RecordError, StoreError
from pipeline.feeds import FEED_TYPES, FeedFormat, FeedItem, FeedReading, NotAFeed, read_feed
from pipeline.fetch import Fetcher
from pipeline.ids import candidate_id, canonical_url, draft_id_for, same_page_key
from pipeline.models import (
    Candidate,
    CandidateState,
    Feed,
    FeedEntry,
    FeedKind,
    FeedState,
    FetchFailure,
    SourceEntry,
    utc_now,
)
from pipeline.reasons import Reason
from pipeline.registry import RegisteredFeed
from pipeline.settings import Settings
from pipeline.sources import registered_by_page
from pipeline.store import Store

if TYPE_CHECKING:  # the flow checks what discovery drafted; discovery needs none of it
    from pipeline.duplicates import DuplicateReport

__all__ = [
    "DISCOVERED_FILE",
    "DiscoverReport",
    "DiscoverRun",
    "FeedReport",
    "discover",
    "discover_async",
    "match",
    "select_feeds",
    "source_entry",
]

# Where the sources of a feed with `auto_accept` (and accepted candidates) are registered.
DISCOVERED_FILE = "discovered.yaml"

# `not_due`: its own `schedule` says it was read recently enough. `unchanged`: downloaded, the
# same bytes as last time. `deferred`: its host asked to wait longer than allowed.
Outcome = Literal["read", "not_modified", "unchanged", "not_due", "failed", "deferred"]


@dataclass
class FeedReport:
    url: str
    name: str | None
    outcome: Outcome
    reason: Reason | None = None
    message: str | None = None
    entries: int = 0  # entries read (after max_feed_entries)
    changed: int = 0  # new or changed since the last reading
    candidates: list[str] = field(default_factory=list)  # new candidates' ids
    registered: list[str] = field(default_factory=list)  # URLs registered directly (auto_accept)
    updated: list[str] = field(default_factory=list)  # URLs known before whose entry changed
    filtered: int = 0  # not matching the filters, or a status page's incident with no postmortem yet
    known: int = 0  # registered, proposed or dismissed already, and not changed
    warnings: list[str] = field(default_factory=list)
    bytes_read: int = 0


@dataclass
class DiscoverReport(Report):
    SHOWN = (
        "started_at",
        "counts",
        "failures",
        "requests",
        "bytes_read",
        "candidates_written",
        "writes",
        "feeds",
        "recrawl",
        "drafts",
        "faults",
        "errors",
        "stopped",
    )

    started_at: datetime = field(default_factory=utc_now)
    feeds: list[FeedReport] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)  # of feeds.yaml
    requests: int = 0  # HTTP requests sent, robots.txt included
    bytes_read: int = 0  # feed bodies downloaded
    candidates_written: int = 0  # candidates added or changed
    writes: int = 0  # files written: candidates, registry, drafts
    # Registered sources to crawl now: pages registered directly, and pages whose entry changed.
    recrawl: list[SourceEntry] = field(default_factory=list)
    drafts: list[SourceReport] = field(default_factory=list)  # drafts written from a feed's text
    errors: list[Exception] = field(default_factory=list)  # unexpected: bugs to raise once reported
    # Why nothing the feeds listed was sorted (the candidates file cannot be read): the next run reads them again.
    stopped: str | None = None

    def counts(self) -> dict[str, int]:
        return {
            **tally((f.outcome for f in self.feeds), Outcome),
            "candidates": sum(len(f.candidates) for f in self.feeds),
            "registered": sum(len(f.registered) for f in self.feeds),
            "updated": sum(len(f.updated) for f in self.feeds),
        }

    def failures(self) -> dict[str, int]:
        return tally_reasons(((f.outcome, f.reason) for f in self.feeds), "failed")

    def to_dict(self) -> dict[str, Any]:
        found = super().to_dict()
        found["recrawl"] = [e.url for e in self.recrawl]  # the sources by their URL alone
        return found


@dataclass
class DiscoverRun:
    """What a discover flow run did: the feeds read, and the crawl of what they registered or changed."""

    report: DiscoverReport
    crawl: CrawlReport | None = None
    duplicates: DuplicateReport | None = None  # the drafts written's possible duplicates (pipeline.duplicates)

    def counts(self) -> dict[str, int]:
        return self.report.counts()

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.report.to_dict(),
            "crawl": self.crawl.to_dict() if self.crawl else None,
            **({"duplicates": asdict(self.duplicates)} if self.duplicates else {}),
        }


# ------------------------------------------------------------ the pure part


@functools.lru_cache(maxsize=512)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


def match(feed: Feed, item: FeedItem) -> str | None:
    """Why the feed's filters take `item` (a phrase for the candidates list), or None when they do not.

    `exclude` rules an entry out if it matches the title or the summary; `include`, when given, must
    match one of them. A status page or Google Cloud incident is taken only once it has a postmortem:
    they list every blip, and the postmortem is what makes one a case.
    """
    fields = (("title", item.title or ""), ("summary", item.summary or ""))
    for pattern in feed.exclude:
        if any(_pattern(pattern).search(text) for _, text in fields):
            return None
    needs_text = feed.kind in (FeedKind.STATUSPAGE, FeedKind.GCP_INCIDENTS)
    if needs_text and not item.text:
        return None
    for pattern in feed.include:
        for name, text in fields:
            found = _pattern(pattern).search(text)
            if found:
                return f"{found.group(0)!r} in the {name} (include {pattern!r})"
    if feed.include:
        return None
    return "it has a postmortem" if needs_text else "every entry of the feed is taken"


def select_feeds(feeds: list[RegisteredFeed], wanted: Sequence[str] | None) -> list[Feed]:
    """The feeds named (by name or URL), or all; an unknown name is an error that lists the known ones."""
    if not wanted:
        return [f.feed for f in feeds]
    chosen = []
    for want in wanted:
        found = [f.feed for f in feeds if want in (f.feed.name, f.feed.url)]
        if not found:
            known = ", ".join(f.feed.label for f in feeds[:10]) or "none"
            raise RecordError(f"sources/feeds.yaml: no feed named {want!r} (feeds: {known})")
        chosen.extend(found)
    return list({feed.url: feed for feed in chosen}.values())  # a feed named twice (name and URL) is read once


def _due(feed: Feed, state: FeedState | None, now: datetime) -> bool:
    pace = feed.pace_seconds
    return not (pace and state and state.checked_at and now - state.checked_at < timedelta(seconds=pace))


@dataclass
class _Fetched:
    """One feed after its request: the report so far, its new state, and its entries when read."""

    feed: Feed
    report: FeedReport
    state: FeedState
    reading: FeedReading | None = None


# ------------------------------------------------------------ the I/O shell


async def discover_async(
    store: Store,
    settings: Settings,
    feeds: Sequence[str] | None = None,
    on_feed: Callable[[FeedReport], None] | None = None,
) -> DiscoverReport:
    """Read the feeds that are due and propose what they list; see the module's text."""
    registered_feeds, faults = await asyncio.to_thread(store.read_feeds)
    chosen = select_feeds(registered_feeds, feeds)
    states = await asyncio.to_thread(store.state.read_feed_states)
    now = utc_now()

    async def one(feed: Feed) -> _Fetched:
        state = states.get(feed.url) or FeedState(url=feed.url)
        report = FeedReport(feed.url, feed.name, "not_due")
        if not (_due(feed, state, now) or feeds):  # a feed named on the command line is read now
            return _Fetched(feed, report, state)
        good = state.sha256 is not None  # validators only from a reading that went well
        result = await fetcher.fetch(
            feed.url,
            etag=state.etag if good else None,
            last_modified=state.last_modified if good else None,
            accept=FEED_TYPES[feed.kind],
        )
        report.bytes_read = result.bytes_read
        checked = state.model_copy(update={"checked_at": utc_now()})
        if result.reason == Reason.DEFERRED:
            report.outcome, report.reason, report.message = "deferred", Reason.DEFERRED, result.message
            return _Fetched(feed, report, state)
        if result.outcome == "failed":
            reason = result.reason or Reason.INTERNAL_ERROR
            report.outcome, report.reason, report.message = "failed", reason, result.message
            failure = FetchFailure(reason=reason, message=result.message or "failed", http_status=result.status)
            return _Fetched(feed, report, checked.model_copy(update={"failure": failure}))
        validators = {"etag": result.etag, "last_modified": result.last_modified, "failure": None}
        if result.outcome == "not_modified":
            report.outcome = "not_modified"
            return _Fetched(feed, report, checked.model_copy(update=validators))
        body = result.body or b""
        sha = hashlib.sha256(body).hexdigest()
        if sha == state.sha256:
            report.outcome = "unchanged"  # a server that ignores validators, or sends none
            return _Fetched(feed, report, checked.model_copy(update=validators))
        try:
            reading = await asyncio.to_thread(
                read_feed,
                FeedFormat(feed.kind, feed.selector),
                body,
                result.content_type,
                result.final_url or feed.url,
                limit=settings.max_feed_entries,
            )
        except NotAFeed as exc:
            report.outcome, report.reason, report.message = "failed", Reason.NOT_A_FEED, f"{feed.url}: {exc}"
            failure = FetchFailure(reason=Reason.NOT_A_FEED, message=str(exc), http_status=result.status)
            return _Fetched(feed, report, checked.model_copy(update={"failure": failure, "sha256": None}))
        report.outcome, report.entries, report.warnings = "read", len(reading.items), reading.warnings
        # Broken XML read as far as it goes is not a reading to answer 304s with: read it whole next time.
        whole = not any(w.startswith("malformed") for w in reading.warnings)
        update = {**validators, "read_at": utc_now(), "warnings": reading.warnings, "sha256": sha if whole else None}
        return _Fetched(feed, report, checked.model_copy(update=update), reading)

    def failed(feed: Feed, exc: Exception) -> _Fetched:
        report = FeedReport(feed.url, feed.name, "failed", Reason.INTERNAL_ERROR, repr(exc))
        return _Fetched(feed, report, states.get(feed.url) or FeedState(url=feed.url))

    async with Fetcher(settings) as fetcher:
        fetched, errors = await each(chosen, one, failed, label=lambda feed: feed.url)
        requests = fetcher.requests
    report = DiscoverReport(started_at=now, faults=faults, requests=requests, errors=errors)
    order = {feed.url: index for index, feed in enumerate(chosen)}
    fetched.sort(key=lambda f: order[f.feed.url])
    try:
        await asyncio.to_thread(_propose, store, settings, fetched, report)
    except StoreError as exc:  # nothing written: the feeds' states neither, so their entries come again
        report.stopped = str(exc)
    for done in fetched:
        report.feeds.append(done.report)
        report.bytes_read += done.report.bytes_read
        if on_feed is not None:
            on_feed(done.report)
    return report


def _propose(store: Store, settings: Settings, fetched: list[_Fetched], report: DiscoverReport) -> None:
    """Sort every new or changed entry into registered, candidate, dismissed or new (under the
    registry's lock, so that `candidates accept` never meets a half-made list); then write the
    drafts of feed texts, and last the feeds' fingerprints."""
    if all(done.reading is None for done in fetched):
        # Not one feed changed: nothing to sort, and the registry and the candidates are not read
        # (a file of 2,000 candidates took 0.8 s to read, most of a run with nothing new).
        store.state.update_feed_states(
            {done.feed.url: done.state for done in fetched if done.report.outcome != "not_due"}
        )
        return
    with store.state.lock("sources"):
        registered = {key: source.entry for key, source in registered_by_page(store).items()}
        candidates, _ = store.read_candidates(strict=True)
        sorting = _Sorting(store, report, registered, by_id={c.id: c for c in candidates})
        for done in fetched:
            if done.reading is None:
                continue
            fingerprints: dict[str, str] = {}
            for item in done.reading.items:
                fingerprints[item.key] = item.fingerprint
                sorting.sort(done, item)
            # Entries the feed no longer lists are forgotten: a feed keeps only its newest.
            done.state = done.state.model_copy(update={"entries": fingerprints})
        sorting.write()
    # A page listed by two feeds, or changed in both, is crawled once.
    report.recrawl = list({entry.url: entry for entry in report.recrawl}.values())
    for entry, text in sorting.texts.values():
        interrupt.check()
        written = write_feed_text(store, settings, entry, text)
        report.drafts.append(written)
        report.writes += int(written.wrote)
    store.state.update_feed_states({done.feed.url: done.state for done in fetched if done.report.outcome != "not_due"})


@dataclass
class _Sorting:
    """The feeds' entries as `_propose` sorts them, under the registry's lock: what is registered
    and proposed so far, with what this run adds, all written in one go at the end."""

    store: Store
    report: DiscoverReport
    registered: dict[str, SourceEntry]  # by same_page_key
    by_id: dict[str, Candidate]
    new: list[Candidate] = field(default_factory=list)  # listed first, in the feeds' order (newest first)
    changed_candidates: int = 0
    to_register: list[SourceEntry] = field(default_factory=list)
    texts: dict[str, tuple[SourceEntry, str]] = field(default_factory=dict)  # drafts to write from feed texts

    def sort(self, done: _Fetched, item: FeedItem) -> None:
        """One entry of a feed read: nothing when it has not changed since the last reading (its
        feed state's fingerprints, still the last reading's); else by what its page is already."""
        try:
            page = same_page_key(item.url)
        except ValueError:  # a feed's link with a port that does not parse: no page to propose
            return
        item = _canonical(item)
        old = done.state.entries
        source = self.registered.get(page)
        if (
            source is not None
            and source.feed_text
            and item.text
            and not self.store.exists("draft", draft_id_for(source.url))
        ):
            self.texts[source.url] = (source, item.text)  # accepted where its text was not at hand
        if old.get(item.key) == item.fingerprint:
            return
        done.report.changed += 1
        first_sight = item.key not in old
        if source is not None:
            self._registered(done, item, source, first_sight)
            return
        cid = candidate_id(item.url)
        candidate = self.by_id.get(cid)
        if candidate is not None:
            self._proposed(done, item, cid, candidate, first_sight)
        else:
            self._new(done, item, page, cid)

    def _registered(self, done: _Fetched, item: FeedItem, source: SourceEntry, first_sight: bool) -> None:
        """A registered page's entry: crawled again, or its draft rewritten from the feed's text."""
        if first_sight:
            done.report.known += 1
            return
        done.report.updated.append(source.url)
        if source.feed_text and item.text:
            self.texts[source.url] = (source, item.text)
        elif not source.feed_text:
            self.report.recrawl.append(source)

    def _proposed(self, done: _Fetched, item: FeedItem, cid: str, candidate: Candidate, first_sight: bool) -> None:
        """A candidate's entry: its title, date and text follow the feed; a dismissed one stays dismissed."""
        if candidate.state == CandidateState.DISMISSED or first_sight:
            done.report.known += 1
            return
        refreshed = _refreshed(candidate, done.feed, item)
        if refreshed != candidate:
            self.by_id[cid] = refreshed
            self.changed_candidates += 1
            done.report.updated.append(candidate.url)
        if item.text:  # a postmortem revised under the same title: accept drafts the new text
            self.store.state.keep_feed_text(cid, item.text)

    def _new(self, done: _Fetched, item: FeedItem, page: str, cid: str) -> None:
        """A page never seen: left out by the feed's filters, registered (auto_accept) or proposed."""
        why = match(done.feed, item)
        if why is None:
            done.report.filtered += 1
            return
        if done.feed.auto_accept:
            entry = _source_entry(done.feed, item)
            self.to_register.append(entry)
            self.registered[page] = entry
            done.report.registered.append(entry.url)
            if item.text:
                self.texts[entry.url] = (entry, item.text)
            else:
                self.report.recrawl.append(entry)
            return
        self.by_id[cid] = _candidate(cid, done.feed, item, why, self.report.started_at)
        self.new.append(self.by_id[cid])
        self.changed_candidates += 1
        done.report.candidates.append(cid)
        if item.text:
            self.store.state.keep_feed_text(cid, item.text)

    def write(self) -> None:
        """The registry's new entries, then the candidates when they changed."""
        store, report = self.store, self.report
        if self.to_register:
            store.append_sources(self.to_register, DISCOVERED_FILE)
            report.writes += 1
        fresh = {c.id for c in self.new}
        # An open candidate registered meanwhile (by hand, or a crash inside an accept) waits for no one.
        taken = {
            c.id
            for c in self.by_id.values()
            if c.state == CandidateState.OPEN and same_page_key(c.url) in self.registered
        }
        listed = self.new + [c for c in self.by_id.values() if c.id not in fresh and c.id not in taken]
        if (self.changed_candidates or taken) and store.write_candidates(listed):
            report.writes += 1
        report.candidates_written = self.changed_candidates


def _canonical(item: FeedItem) -> FeedItem:
    """The entry with its page's canonical URL (`ids.canonical_url`, as draft ids have it: tracking
    parameters, dot segments and fragments gone, the other parameters kept), so that the candidate,
    the registry, the source and its captures all name the page so; the link as the feed spelt it
    stays in `listed_as`."""
    url = canonical_url(item.url)
    return item if url == item.url else replace(item, url=url, listed_as=item.listed_as or item.url)


def source_entry(
    url: str,
    feed: Feed | None,
    *,
    feed_url: str,
    title: str | None,
    date: str | None,
    org: str | None,
    kind: str | None,
    feed_text: bool,
) -> SourceEntry:
    """The registry's entry of a page a feed proposed (registered directly, or a candidate accepted).

    The operator's word on the feed in feeds.yaml (its `org`, its `source_kind`) is a hint, as if
    written on the entry; what the feed's entry said (its title, its posting date, the org a list's
    link text names) is kept apart in `feed_entry`, below the page's own word (pipeline.precedence)."""
    feed_org = feed.org if feed is not None else None
    hinted = bool(feed_org) and org in (None, feed_org)
    return SourceEntry(
        url=canonical_url(url),
        org=feed_org if hinted else None,
        kind=kind,
        discovered_from=feed_url,
        feed_text=feed_text,
        feed_entry=FeedEntry(title=title, date=date, org=None if hinted else org),
    )


def _source_entry(feed: Feed, item: FeedItem) -> SourceEntry:
    return source_entry(
        item.url,
        feed,
        feed_url=feed.url,
        title=item.title,
        date=item.date,
        org=item.org or feed.org,
        kind=feed.source_kind,
        feed_text=item.text is not None,
    )


def _candidate(cid: str, feed: Feed, item: FeedItem, why: str, found_at: datetime) -> Candidate:
    return Candidate(
        id=cid,
        url=item.url,
        feed=feed.url,
        title=item.title,
        date=item.date,
        org=item.org or feed.org,
        source_kind=feed.source_kind,
        why=why,
        listed_as=item.listed_as,
        feed_text=item.text is not None,
        found_at=found_at,
    )


def _refreshed(candidate: Candidate, feed: Feed, item: FeedItem) -> Candidate:
    """An open candidate after its entry changed: what the feed says now, and when it said it."""
    update = {
        "title": item.title or candidate.title,
        "date": item.date or candidate.date,
        "feed_text": candidate.feed_text or item.text is not None,
        "why": match(feed, item) or candidate.why,
    }
    if all(getattr(candidate, k) == v for k, v in update.items()):
        return candidate
    return candidate.model_copy(update={**update, "updated_at": utc_now()})


def discover(
    store: Store,
    settings: Settings,
    feeds: Sequence[str] | None = None,
    on_feed: Callable[[FeedReport], None] | None = None,
    *,
    raise_errors: bool = True,
) -> DiscoverReport:
    """Read the feeds (all that are due, or those named) and propose what they list.

    Unexpected errors (bugs) are raised as one ExceptionGroup after every feed has had its turn;
    with `raise_errors=False` they stay in `report.errors`.
    """
    report = interrupt.run(discover_async(store, settings, feeds, on_feed))
    if raise_errors:
        raise_unexpected(report.errors, "feeds")
    return report
