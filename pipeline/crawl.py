"""The crawl: every registered source fetched, extracted and written into its draft.

    report = crawl(store, settings)              # the whole registry
    report = crawl(store, settings, entries)     # some sources (a Prefect task's share)

Re-running is idempotent: a source maps to one draft (its id comes from the canonical
URL); an unchanged page (304, or the same bytes) writes nothing; a changed one updates
the draft in place, keeping what a person edited (see pipeline.draft). A source that
fails gets the reason on its draft and in the report; the others go on. A source whose
host asked to wait longer than allowed is `deferred`: not requested, its draft untouched.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pipeline import interrupt
from pipeline.batch import Report, each, raise_unexpected, tally_reasons
from pipeline.draft import DraftRules, apply_extraction, new_draft, new_part_draft, part_entry, record_failure
from pipeline.errors import ExtractError, Fault, FetchError, InvalidRecord
from pipeline.extract import Extraction, extract
from pipeline.fetch import Fetcher, FetchResult, fetch_url_for, host_key
from pipeline.finder import Finder, load
from pipeline.ids import canonical_url, draft_id_for, part_draft_id
from pipeline.learn import finder_in_use
from pipeline.models import Draft, DraftState, Origin, SourceEntry, utc_now
from pipeline.precedence import source_hints
from pipeline.reasons import Reason
from pipeline.registry import find_duplicates
from pipeline.settings import Settings
from pipeline.store import Store

if TYPE_CHECKING:  # a crawl run archives its new drafts (and may ask the assist); the crawl needs neither
    from pipeline.archive import ArchiveReport
    from pipeline.assist import AssistReport
    from pipeline.duplicates import DuplicateReport

__all__ = [
    "AfterCrawl",
    "CrawlPlan",
    "CrawlReport",
    "CrawlRun",
    "Outcome",
    "SourceReport",
    "after_crawl",
    "crawl",
    "crawl_async",
    "extract_one",
    "host_groups",
    "plan_crawl",
    "registry_entries",
    "share_concurrency",
    "write_feed_text",
]

# `deferred`: the source's host asked to wait longer than allowed; it was not requested and its
# draft is left as it was, to be tried again next run.
Outcome = Literal["new", "updated", "unchanged", "failed", "deferred", "skipped"]


@dataclass
class SourceReport:
    url: str
    draft_id: str
    outcome: Outcome
    reason: Reason | None = None
    message: str | None = None
    wrote: bool = False  # the draft file was written
    downloaded: bool = False  # a body was downloaded
    # The drafts of its incidents, one each, when the page's own headings separate several.
    parts: list[str] = field(default_factory=list)


@dataclass
class CrawlReport(Report):
    ITEMS, OUTCOMES = "sources", Outcome
    SHOWN = ("counts", "failures", "requests", "bodies", "writes", "sources", "errors")

    sources: list[SourceReport] = field(default_factory=list)
    requests: int = 0  # HTTP requests sent, robots.txt included
    bodies: int = 0  # response bodies downloaded
    # Drafts given text from their page: the new and the updated ones (a failure noted on a draft, or an
    # unchanged page's new validators, is a write of its file but no draft written).
    writes: int = 0
    errors: list[Exception] = field(default_factory=list)  # unexpected: bugs to raise once reported

    def failures(self) -> dict[str, int]:
        return tally_reasons(((s.outcome, s.reason) for s in self.sources), "failed")

    def merge(self, other: CrawlReport) -> CrawlReport:
        return CrawlReport(
            self.sources + other.sources,
            self.requests + other.requests,
            self.bodies + other.bodies,
            self.writes + other.writes,
            self.errors + other.errors,
        )


@dataclass
class CrawlRun:
    """What a crawl flow run did: the crawl, the registry's faults, and the archiving of new drafts."""

    report: CrawlReport
    registry_faults: list[Fault] = field(default_factory=list)
    archive: ArchiveReport | None = None
    assist: AssistReport | None = None  # with INCIDENTLIB_ASSIST_AFTER_CRAWL: what the model proposed
    duplicates: DuplicateReport | None = None  # the new and changed drafts' possible duplicates (pipeline.duplicates)

    def counts(self) -> dict[str, int]:
        return self.report.counts()

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.report.to_dict(),
            "registry_faults": [str(f) for f in self.registry_faults],
            "archive": self.archive.to_dict() if self.archive else None,
            **({"assist": self.assist.to_dict()} if self.assist else {}),
            **({"duplicates": asdict(self.duplicates)} if self.duplicates else {}),
        }


def host_groups(entries: list[SourceEntry], groups: int) -> list[list[SourceEntry]]:
    """Split sources into at most `groups` shares, each host wholly in one share.

    Keeping a host in one share keeps its politeness in one place; the largest hosts are
    placed first, each in the share with the least work so far, to balance the shares.
    """
    by_host: dict[str, list[SourceEntry]] = {}
    for entry in entries:
        by_host.setdefault(host_key(fetch_url_for(entry.url)), []).append(entry)
    shares: list[list[SourceEntry]] = [[] for _ in range(min(groups, len(by_host)) or 1)]
    for host_entries in sorted(by_host.values(), key=len, reverse=True):
        min(shares, key=len).extend(host_entries)
    return [share for share in shares if share]


def _origin(entry: SourceEntry, result: FetchResult) -> Origin:
    assert result.body is not None
    return Origin(
        url=entry.url,
        canonical_url=canonical_url(entry.url),
        final_url=result.final_url,
        fetched_at=utc_now(),
        content_type=result.content_type,
        etag=result.etag,
        last_modified=result.last_modified,
        sha256=hashlib.sha256(result.body).hexdigest(),
    )


def _read(entry: SourceEntry, result: FetchResult, settings: Settings) -> Extraction | ExtractError:
    """The fetched document read into text and sections (CPU work, done outside any lock)."""
    try:
        return extract(
            result.body or b"",
            result.final_url or entry.url,
            result.content_type,
            hints=source_hints(entry),
            favor=settings.extract_favor,
        )
    except ExtractError as exc:
        return exc


def _needs_reading(draft: Draft | None, result: FetchResult) -> bool:
    if result.outcome != "fetched" or result.body is None:
        return False
    return draft is None or draft.text is None or draft.origin.sha256 != hashlib.sha256(result.body).hexdigest()


def _updated_draft(
    draft: Draft,
    entry: SourceEntry,
    result: FetchResult,
    settings: Settings,
    reading: Extraction | ExtractError | None = None,
    finder: Finder | None = None,
) -> tuple[Draft, Outcome, Reason | None, str | None]:
    """The draft after one fetch, and what happened. Pure but for the clock (and `_read` when not given)."""
    if result.outcome == "not_modified":
        return draft, "unchanged", None, None
    if result.outcome == "failed":
        reason, message = result.reason or Reason.INTERNAL_ERROR, result.message or "failed"
        return record_failure(draft, reason, message, result.status), "failed", reason, message
    origin = _origin(entry, result)
    if not _needs_reading(draft, result):
        # Same bytes: keep the text; only new validators (ETag, Last-Modified) are worth a write.
        kept = draft.origin.model_copy(
            update={"etag": origin.etag, "last_modified": origin.last_modified, "failure": None}
        )
        return draft.model_copy(update={"origin": kept}), "unchanged", None, None
    if reading is None:
        reading = _read(entry, result, settings)
    if isinstance(reading, ExtractError):
        return record_failure(draft, reading.reason, str(reading)), "failed", reading.reason, str(reading)
    origin = origin.model_copy(update={"format": reading.format})
    rules = DraftRules(settings.draft_confidence_threshold, finder)
    return apply_extraction(draft, entry, reading, origin, rules), "updated", None, None


async def crawl_async(
    store: Store,
    settings: Settings,
    entries: list[SourceEntry],
    on_source: Callable[[SourceReport], None] | None = None,
    *,
    concurrency: int | None = None,
) -> CrawlReport:
    """Crawl `entries` concurrently within the politeness limits; see `crawl`.

    An unexpected error in one source is a bug: it is recorded on that source as
    `internal-error` and kept in `report.errors`, and the other sources go on (see
    pipeline.batch); the caller decides how to fail once the report is safe.
    """
    if concurrency is not None:
        settings = settings.model_copy(update={"concurrency": concurrency})
    # The finder's model, read once before any fetch: a file that cannot be read is one line naming it
    # (StoreError), not an internal error on every source.
    await asyncio.to_thread(finder_in_use, store, settings)
    kept = await asyncio.to_thread(kept_draft_ids, store, entries)

    def draft_id_of(entry: SourceEntry) -> str:
        draft_id = draft_id_for(entry.url)
        return draft_id if store.exists("draft", draft_id) else kept.get(draft_id, draft_id)

    async def one(entry: SourceEntry) -> SourceReport:
        draft_id = draft_id_of(entry)
        existing = _draft_to_update(store, entry, draft_id)
        if isinstance(existing, SourceReport):
            return existing
        if entry.feed_text:  # its text is the feed's: discover writes it
            return SourceReport(entry.url, draft_id, "skipped", Reason.FEED_TEXT, None)
        # A crash may have left the drafts of its incidents unwritten: then the page is read again
        # (fetched whole, not asked "modified since?"), even if it has not changed.
        unwritten = existing is not None and any(
            i.draft_id and not store.exists("draft", i.draft_id) for i in existing.incidents
        )
        origin = existing.origin if existing and existing.origin.failure is None and not unwritten else None
        result = await fetcher.fetch(
            entry.url, etag=origin.etag if origin else None, last_modified=origin.last_modified if origin else None
        )
        if result.reason == Reason.DEFERRED:  # nothing learnt about the page: its draft stays as it was
            return SourceReport(entry.url, draft_id, "deferred", Reason.DEFERRED, result.message)
        reads = _needs_reading(existing, result) or (unwritten and result.outcome == "fetched")
        reading = await asyncio.to_thread(_read, entry, result, settings) if reads else None
        return await asyncio.to_thread(_apply, store, settings, entry, draft_id, result, reading)

    def failed(entry: SourceEntry, exc: Exception) -> SourceReport:
        return SourceReport(entry.url, draft_id_of(entry), "failed", Reason.INTERNAL_ERROR, repr(exc))

    async with Fetcher(settings) as fetcher:
        sources, errors = await each(entries, one, failed, on_source, label=lambda entry: entry.url)
        report = CrawlReport(sources, requests=fetcher.requests, errors=errors)
    report.bodies = sum(1 for s in report.sources if s.downloaded)
    report.writes = sum(1 for s in report.sources if s.wrote and s.outcome in ("new", "updated"))
    return report


def _draft_to_update(store: Store, entry: SourceEntry, draft_id: str) -> Draft | SourceReport | None:
    """The source's draft (None before its first), or why it is not to be written: a hand-broken draft
    is not overwritten (a person must look at it first), a rejected one is not drafted again until
    someone reopens it, and a merged one never (its sources are its survivor's now)."""
    try:
        existing = store.read_draft(draft_id) if store.exists("draft", draft_id) else None
    except InvalidRecord as exc:
        return SourceReport(entry.url, draft_id, "failed", Reason.INVALID_DRAFT, str(exc))
    if existing is not None and existing.state in _LEFT_ALONE:
        said = f"merged into {existing.merged_into}" if existing.state == DraftState.MERGED else None
        return SourceReport(entry.url, draft_id, "skipped", _LEFT_ALONE[existing.state], said)
    return existing


# The states whose draft the crawl does not write, and the reason it gives.
_LEFT_ALONE = {DraftState.REJECTED: Reason.REJECTED, DraftState.MERGED: Reason.MERGED}


def kept_draft_ids(store: Store, entries: list[SourceEntry]) -> dict[str, str]:
    """Drafts an earlier version named by another canonical form of their URL, by today's id.

    A draft keeps its id for good (a case, a review and links name it), so a source whose
    URL gives another id today (0.1.0 resolved neither dot segments nor address spellings)
    is crawled into the draft it has. Only drafts that no source's id names are read.
    """
    today = {draft_id_for(entry.url) for entry in entries}
    kept: dict[str, str] = {}
    for draft_id in store.ids("draft"):
        if draft_id in today:
            continue
        try:
            draft = store.read_draft(draft_id)
            moved = draft_id_for(draft.origin.url)
        except (InvalidRecord, ValueError):  # validate names it
            continue
        if draft.part_of is not None:  # one incident of a page: named after the page's draft
            continue
        if moved != draft_id:
            kept.setdefault(moved, draft_id)
    return kept


def _apply(
    store: Store,
    settings: Settings,
    entry: SourceEntry,
    draft_id: str,
    result: FetchResult,
    reading: Extraction | ExtractError | None,
) -> SourceReport:
    """Merge the fetch into the draft under its lock (in a worker thread: file I/O)."""
    outcome: list[tuple[Outcome, Reason | None, str | None, bool]] = []
    finder = finder_in_use(store, settings)

    def change(draft: Draft) -> Draft | None:
        if draft.state in _LEFT_ALONE:  # rejected or merged since it was read, before its lock was taken
            outcome.append(("skipped", _LEFT_ALONE[draft.state], None, False))
            return None
        updated, what, reason, message = _updated_draft(draft, entry, result, settings, reading, finder)
        # New: the draft's first text, in a new draft or one that held only its failures until now.
        if what == "updated" and (is_new or (draft.text is None and draft.origin.failure is not None)):
            what = "new"
        outcome.append((what, reason, message, updated != draft))
        return updated if updated != draft else None

    is_new = not store.exists("draft", draft_id)
    store.update_draft(draft_id, change, create=lambda: new_draft(entry))
    what, reason, message, changed = outcome[0]
    parts = (
        _apply_parts(store, entry, draft_id, reading, settings.draft_confidence_threshold, finder)
        if what not in ("failed", "skipped")
        else []
    )
    return SourceReport(
        entry.url,
        draft_id,
        what,
        reason,
        message,
        wrote=is_new or changed,
        downloaded=result.outcome == "fetched",
        parts=parts,
    )


def _apply_parts(
    store: Store,
    entry: SourceEntry,
    draft_id: str,
    reading: Extraction | ExtractError | None,
    threshold: float,
    finder: Finder | None,
) -> list[str]:
    """Write the draft of each incident of a page that tells several (its own headings separate
    them), as the page's own draft is written: a person's edits kept, a rejected or merged one left alone.
    Written after the page's draft, which names them: after a crash between the two, the next
    crawl reads the page again, even unchanged, and writes the ones missing."""
    if not isinstance(reading, Extraction) or not reading.parts:
        return []
    written = []
    as_part = part_entry(entry)
    for number, part in enumerate(reading.parts, start=1):
        origin = store.read_draft(draft_id).origin

        def change(draft: Draft, part: Extraction = part, origin: Origin = origin) -> Draft | None:
            if draft.state in _LEFT_ALONE:
                return None
            updated = apply_extraction(draft, as_part, part, origin, DraftRules(threshold, finder))
            return updated if updated != draft else None

        def create(number: int = number) -> Draft:
            return new_part_draft(entry, draft_id, number)

        part_id = part_draft_id(draft_id, number)
        store.update_draft(part_id, change, create=create)
        written.append(part_id)
    return written


def write_feed_text(store: Store, settings: Settings, entry: SourceEntry, text: str) -> SourceReport:
    """Write a source's draft from the text its feed carries (a status page's postmortem), as the
    crawl writes one from a fetched page: the entry's URL is the source, and a person's edits are kept."""
    draft_id = draft_id_for(entry.url)
    existing = _draft_to_update(store, entry, draft_id)
    if isinstance(existing, SourceReport):
        return existing
    result = FetchResult(
        url=entry.url,
        outcome="fetched",
        final_url=entry.url,
        status=200,
        content_type="text/markdown; charset=utf-8",
        body=text.encode("utf-8"),
    )
    reading = _read(entry, result, settings) if _needs_reading(existing, result) else None
    report = _apply(store, settings, entry, draft_id, result, reading)
    report.downloaded = False  # nothing was fetched: the feed was
    return report


def crawl(
    store: Store,
    settings: Settings,
    entries: list[SourceEntry] | None = None,
    on_source: Callable[[SourceReport], None] | None = None,
    *,
    concurrency: int | None = None,
    raise_errors: bool = True,
) -> CrawlReport:
    """Fetch and extract every source (the registry's, unless `entries` is given) into its draft.

    Unexpected errors (bugs) are raised as one ExceptionGroup after every source has had
    its turn (pipeline.batch); with `raise_errors=False` they stay in `report.errors`.
    """
    if entries is None:
        entries, _ = registry_entries(store)
    report = interrupt.run(crawl_async(store, settings, entries, on_source, concurrency=concurrency))
    if raise_errors:
        raise_unexpected(report.errors, "sources")
    return report


def registry_entries(store: Store) -> tuple[list[SourceEntry], list[Fault]]:
    """The registry's sources, each URL once (the first entry wins), and the registry's faults."""
    registered, faults = store.read_sources()
    duplicates = find_duplicates(registered)
    duplicated = {f.path for f in duplicates}
    return [r.entry for r in registered if r.where not in duplicated], faults + duplicates


def share_concurrency(settings: Settings, groups: int) -> int:
    """Each of `groups` concurrent crawls gets its share of the global bound (never more in all)."""
    return max(1, settings.concurrency // max(1, groups))


@dataclass(frozen=True)
class CrawlPlan:
    """How a crawl run goes: the registry's sources in shares (each host wholly in one), how many requests
    each share makes at once, and the registry's faults (entries not crawled)."""

    entries: list[SourceEntry]
    shares: list[list[SourceEntry]]
    concurrency: int
    faults: list[Fault]


def plan_crawl(store: Store, settings: Settings) -> CrawlPlan:
    """The registry read and split for a run (`crawl_task_groups` shares, `concurrency` between them)."""
    entries, faults = registry_entries(store)
    shares = host_groups(entries, settings.crawl_task_groups)
    return CrawlPlan(entries, shares, share_concurrency(settings, len(shares)), faults)


@dataclass(frozen=True)
class AfterCrawl:
    """What a crawl run does next with the drafts it wrote (each part of a split document included): the new
    ones' sources captured, the new and updated ones checked for duplicates and, when the settings ask, put
    to the writer assist; `warning`: a setting asks for the assist that has no model to ask."""

    archive: list[str]
    duplicates: list[str]
    assist: list[str]
    warning: str | None = None


def after_crawl(report: CrawlReport, settings: Settings, *, archive_new: bool = True) -> AfterCrawl:
    """The follow-ups of a crawl (`AfterCrawl`), from its report and the settings."""
    new = [d for s in report.sources if s.outcome == "new" for d in (s.draft_id, *s.parts)]
    changed = [d for s in report.sources if s.outcome in ("new", "updated") for d in (s.draft_id, *s.parts)]
    warning = None
    if settings.assist_after_crawl and not settings.assist_configured:
        warning = "INCIDENTLIB_ASSIST_AFTER_CRAWL is set, but no model: set INCIDENTLIB_LLM_URL and _MODEL"
    ask = changed if settings.assist_after_crawl and settings.assist_configured else []
    return AfterCrawl(new if archive_new else [], changed, ask, warning)


def extract_one(
    settings: Settings,
    url: str,
    *,
    body: bytes | None = None,
    content_type: str | None = None,
    org: str | None = None,
    kind: str | None = None,
) -> Draft:
    """The draft one URL would give, written nowhere: fetched now, or read from `body` as if fetched from `url`.

    Raises FetchError when the URL cannot be fetched and ExtractError when it cannot be read.
    """
    entry = SourceEntry(url=url, org=org, kind=kind)
    if body is None:
        result = interrupt.run(_fetch_one(settings, url))
        if result.outcome != "fetched":
            reason = result.reason or Reason.INTERNAL_ERROR
            raise FetchError(url, reason, (result.message or "failed").removeprefix(f"{url}: "), status=result.status)
    else:
        result = FetchResult(
            url=url, outcome="fetched", final_url=url, status=200, content_type=content_type, body=body
        )
    finder = load() if settings.draft_finder else None  # written nowhere: no library, the packaged model
    draft, outcome, _, message = _updated_draft(new_draft(entry), entry, result, settings, finder=finder)
    if outcome == "failed":
        raise ExtractError(message or "could not be read")
    return draft


async def _fetch_one(settings: Settings, url: str) -> FetchResult:
    async with Fetcher(settings) as fetcher:
        return await fetcher.fetch(url)
