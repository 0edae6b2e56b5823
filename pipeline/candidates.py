"""The candidates the feeds proposed (`sources/candidates.yaml`): listed, accepted into the registry,
or dismissed for good.

    waiting = candidates(store, feed="github")
    report = accept(store, settings, ["c-0123456789"])       # or all_from="github"
    dismiss(store, ["c-0123456789"], reason="a product launch")

An accepted candidate moves to `sources/discovered.yaml` with `discovered_from` its feed, and the
next crawl drafts it; one whose feed carries its text (a status page's postmortem) is drafted at
once from it. A dismissed one stays in the file, so that no feed proposes it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.crawl import SourceReport, write_feed_text
from pipeline.discover import DISCOVERED_FILE, source_entry
from pipeline.errors import RecordError
from pipeline.ids import same_page_key
from pipeline.models import Candidate, CandidateState, SourceEntry, utc_now
from pipeline.settings import Settings
from pipeline.sources import registered_by_page
from pipeline.store import Store

__all__ = ["AcceptReport", "accept", "candidates", "dismiss"]


def candidates(store: Store, feed: str | None = None, *, dismissed: bool = False) -> list[Candidate]:
    """The open candidates (or the dismissed ones), newest first; `feed`: of the feed of that name or URL.

    A candidate registered meanwhile (by hand, or by a crash between the two writes of an accept)
    is not shown: it is no longer waiting for anyone.
    """
    found, _ = store.read_candidates(strict=True)
    registered = registered_by_page(store)
    wanted = _feed_urls(store, feed) if feed else None
    state = CandidateState.DISMISSED if dismissed else CandidateState.OPEN
    shown = [
        c
        for c in found
        if c.state == state and (wanted is None or c.feed in wanted) and same_page_key(c.url) not in registered
    ]
    # The file lists a run's finds feed after feed: newest first is the latest run's, by their dates.
    shown.sort(key=lambda c: c.date or "", reverse=True)
    shown.sort(key=lambda c: c.found_at, reverse=True)
    return shown


def _feed_urls(store: Store, feed: str) -> set[str]:
    feeds, _ = store.read_feeds()
    urls = {f.feed.url for f in feeds if feed in (f.feed.name, f.feed.url)}
    if not urls:
        found, _ = store.read_candidates(strict=True)
        urls = {c.feed for c in found if c.feed == feed}  # a feed since removed from feeds.yaml
    if not urls:
        raise RecordError(f"{store.label(store.feeds_path)}: no feed named {feed!r}")
    return urls


@dataclass
class AcceptReport:
    registered: list[SourceEntry] = field(default_factory=list)
    drafts: list[SourceReport] = field(default_factory=list)  # drafted at once from their feed's text
    # Feed texts not at hand (another machine discovered them): the next discover drafts them.
    waiting_for_text: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"registered": len(self.registered), "drafted": len(self.drafts)}


def accept(
    store: Store,
    settings: Settings,
    ids: Sequence[str] = (),
    *,
    all_from: str | None = None,
    file_name: str = DISCOVERED_FILE,
) -> AcceptReport:
    """Register the candidates named (or every open one of feed `all_from`); nothing changes if one
    of the ids names no open candidate."""
    report = AcceptReport()
    texts: list[tuple[SourceEntry, str]] = []
    with store.state.lock("sources"):
        found, _ = store.read_candidates(strict=True)
        chosen = _open(store, found, ids)
        if all_from:
            urls = _feed_urls(store, all_from)
            chosen += [c for c in found if c.feed in urls and c.state == CandidateState.OPEN and c not in chosen]
        registered = registered_by_page(store)
        known_feeds = {f.feed.url: f.feed for f in store.read_feeds()[0]} if chosen else {}
        entries = []
        for candidate in chosen:
            if same_page_key(candidate.url) in registered:
                continue  # registered meanwhile: only the candidate is left to clear
            entry = source_entry(
                candidate.url,  # canonical: an older version proposed pages as their feed spelt them
                known_feeds.get(candidate.feed),
                feed_url=candidate.feed,
                title=candidate.title,
                date=candidate.date,
                org=candidate.org,
                kind=candidate.source_kind,
                feed_text=candidate.feed_text,
            )
            entries.append(entry)
            if candidate.feed_text:
                text = store.state.feed_text(candidate.id)
                if text is None:
                    report.waiting_for_text.append(candidate.url)
                else:
                    texts.append((entry, text))
        # The registry first: a crash before the candidates are written leaves a registered candidate,
        # which `candidates` no longer shows and the next discover that reads a feed clears.
        store.append_sources(entries, file_name)
        taken = {c.id for c in chosen}
        store.write_candidates([c for c in found if c.id not in taken])
        report.registered = entries
    for entry, text in texts:
        report.drafts.append(write_feed_text(store, settings, entry, text))
    for candidate in chosen:
        store.state.drop_feed_text(candidate.id)
    if report.waiting_for_text:
        # Read those feeds whole next time, so that their texts come again.
        feeds = {c.feed for c in chosen if c.url in report.waiting_for_text}
        store.state.update_feed_states({}, forget=tuple(feeds))
    return report


def dismiss(store: Store, ids: Sequence[str], *, reason: str | None = None) -> list[Candidate]:
    """Mark the candidates named dismissed, for good: no feed proposes them again."""
    with store.state.lock("sources"):
        found, _ = store.read_candidates(strict=True)
        chosen = {c.id for c in _open(store, found, ids)}
        now = utc_now()
        changed = [
            c.model_copy(update={"state": CandidateState.DISMISSED, "dismissed_at": now, "reason": reason or None})
            if c.id in chosen
            else c
            for c in found
        ]
        store.write_candidates(changed)
    for candidate_id in chosen:
        store.state.drop_feed_text(candidate_id)
    return [c for c in changed if c.id in chosen]


def _open(store: Store, found: list[Candidate], ids: Sequence[str]) -> list[Candidate]:
    by_id = {c.id: c for c in found}
    chosen = []
    for candidate_id in dict.fromkeys(ids):
        candidate = by_id.get(candidate_id)
        if candidate is None:
            raise RecordError(f"{store.label(store.candidates_path)}: no candidate {candidate_id}")
        if candidate.state != CandidateState.OPEN:
            raise RecordError(
                f"{store.label(store.candidates_path)}: {candidate_id} was dismissed ({candidate.reason})"
            )
        chosen.append(candidate)
    return chosen
