"""The reader's site, composed and written: `build_files(ctx)` (pure) and `build_site(...)` (its I/O shell).

    files = build_files(ctx)                      # every file of the site, site-relative path -> bytes
    report = build_site(store, settings)          # into the data root's site/ (or `out`): only what changed

A rebuild does work in proportion to what changed, not to the size of the library (10,000 cases: see
docs/site.md for the figures):

- **Cases.** Each case is known by its card (`context.Card`), kept between builds with the file's inode,
  size and modification time; a case whose file is as it was is not read. A file changed within two
  seconds of the last build's look is read again whatever its times say (git's "racy" rule).
- **Files.** Every file but the assembled ones is planned with its inputs (`Planned`: the case digests,
  code and settings its bytes depend on); a file whose inputs hash as the last build's, and which is
  still there, is not made. The others are made and written only when their bytes differ.
- **Assembled files** (`api.ASSEMBLED`: cases.csv, all.zip) copy each unchanged case's piece out of the
  last build's file (`pipeline.site.assemble`).
- **Search.** The index (`pipeline.site.search`, the site's own) is updated with the changed cases'
  documents only, rewriting the few shards their terms live in.

What a build knows between builds lives in the data root's state (`SiteTree.cache_dir`, pipeline.site.tree),
never in the published folder. A rebuild removes the files no longer made, but never a case's page (a
published id always resolves). A crash leaves each file old or new (atomic writes), and a cache that disagrees
with the files is not trusted: an assembled file is copied from only when its bytes hash as recorded.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import cache, partial
from importlib import resources
from itertools import chain
from pathlib import Path
from typing import Any

from pipeline.batch import Report
from pipeline.models import Case, utc_now
from pipeline.render import browser_rules
from pipeline.settings import Settings
from pipeline.site import api, context, database, feeds, pages, search
from pipeline.site.assemble import Previous
from pipeline.site.context import EVERY, Card, Planned, SiteContext, SiteEdition, everything
from pipeline.site.forked import Answer, Child, Line, fork, single_threaded
from pipeline.site.tree import SiteTree, Wanted, is_temporary, site_dir, tree_hash, write_unless_known
from pipeline.store import Store

__all__ = ["KEEP", "BuildReport", "build_files", "build_site", "groups", "plan", "site_context", "static_assets"]


def static_assets(ctx: SiteContext) -> dict[str, bytes]:
    """The package's static files (pipeline/site/static/: the style sheet, the site's scripts minified, the
    vendored scripts of vendor/ with their licences, not its README) under assets/, and
    assets/markdown.json: the texts' Markdown subset as pipeline.render keeps it, for the cards the facet
    script builds."""
    folder = resources.files("pipeline.site").joinpath("static")
    found = {
        f"assets/{item.name}": _minified(item.name, item.read_bytes()) for item in folder.iterdir() if item.is_file()
    }
    vendor = folder.joinpath("vendor")
    found.update(
        {f"assets/vendor/{item.name}": item.read_bytes() for item in vendor.iterdir() if item.name != "README.md"}
    )
    found["assets/markdown.json"] = browser_rules()
    return dict(sorted(found.items()))


def _minified(name: str, data: bytes) -> bytes:
    """A script of the site's own without its comments and spaces (rjsmin: what a listing loads is held to
    100 KB, and the scripts' comments, which explain them in the package, were a third of their bytes)."""
    if not name.endswith(".js"):
        return data
    import rjsmin

    return str(rjsmin.jsmin(data.decode())).encode()


# Never removed from a site folder: the case pages (permalinks; a case whose record left cases/ keeps
# its page, and its record's file in the API).
KEEP = ("cases/*", "*/cases/*")


def plan(ctx: SiteContext, wanted: Callable[[str], bool] = everything) -> dict[str, Planned]:
    """Every file of the site but the assembled ones (of the groups `wanted`, and all of `EVERY`), with its
    inputs: pages, API, feeds, static assets (a later part's file of the same path replaces an earlier one's)."""
    planned = pages.plan(ctx, wanted)
    planned.update(api.plan(ctx, wanted))
    planned.update(feeds.plan(ctx, wanted))
    planned.update({key: Planned(None, _bytes(data)) for key, data in static_assets(ctx).items()})
    return planned


def groups(ctx: SiteContext, cards: Iterable[Card]) -> set[str]:
    """The groups of files that show any of `cards` (the old and new versions of the cases that changed),
    and `EVERY`: what a rebuild plans again. Each part names its own (`pages.groups`, ...)."""
    cards = list(cards)
    return {EVERY} | pages.groups(ctx, cards) | api.groups(ctx, cards) | feeds.groups(ctx, cards)


def _bytes(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def build_files(ctx: SiteContext, stems: search.Stems | None = None) -> dict[str, bytes]:
    """Every file of the site, by site-relative path (the search index's Korean stems from `stems`)."""
    files = {key: planned.make() for key, planned in plan(ctx).items()}
    files.update({key: made.data for key, made in api.assembled(ctx, lambda key: None).items()})
    stems = stems or search.Stems()
    index = search.index_files(_all_docs(ctx, stems))
    files.update({key: data for key, data in index.items() if not search.bookkeeping(key)})
    files[database.KEY] = database.Database(ctx, stems, lambda: None, lambda: None).make()
    return files


@dataclass
class BuildReport(Report):
    SHOWN = (
        "folder",
        "cases",
        "written",
        "unchanged",
        "removed",
        "rendered",
        "read",
        "search",
        "workers",
        "seconds",
        "counts",
    )

    folder: str
    cases: int
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    rendered: int = 0  # files made this time; the others' inputs were as the last build's
    read: int = 0  # case files read this time; the others were known by their cards
    search: dict[str, Any] | None = None  # the search index, when made anew (a case page changed)
    # How the build shared its files with other processes: "forked" (from this one, once it planned),
    # "started" (processes of their own, `pipeline.site.worker`), or "none" (this process made every file).
    # A worker that failed left its files to this process, which made them.
    workers: str = "none"
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        return {"written": len(self.written), "unchanged": self.unchanged, "removed": len(self.removed)}


# ---------------------------------------------------------------- the cases, known by their cards

_CARDS = "cards-{:02d}.pickle"  # the cards' cache, in shards by case id
_CARD_SHARDS = 16
_SPANS = "spans.pickle"
_BUILDING = "building"  # there while a build runs: a build that finds it trusts no cache of the folder
# Korean words' stems (search.Stems), one cache for every folder a data root's site is built into (a word's
# stems are the analyser's, whatever the folder): a build analyses only words no build of the root met.
_STEMS = "site/search-stems.json"
# The caches' format (and the cards' fields, pickled with them): a cache of another is not read.
_FORMAT = (
    f"1:{','.join(f.name for f in fields(Card))}:{hashlib.sha256(Path(context.__file__).read_bytes()).hexdigest()}"
)
_RACY_NS = 2_000_000_000  # a file changed this close to the last look is read again (git's racy rule)


class _Cases:
    """The data root's cases for one build: read from their files when asked for, each once."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cases: dict[str, Case] = {}
        self.files: dict[str, bytes] = {}

    def read_ahead(self, ids: Sequence[str], aside: _ReadAside) -> None:
        """The cases at `ids` read now, the latter part of them (`READ_ASIDE_SHARE`) by a process `aside`
        forks for it meanwhile: a full build reads every case, and checking a case's record is most of a
        build's first third of a second a thousand cases, with one core idle. A case that fails to read is
        left out (`read` reads it again when it is asked for, and raises, in the order the build asks)."""
        ids = [case_id for case_id in ids if case_id not in self.cases]
        mine = len(ids) - int(len(ids) * READ_ASIDE_SHARE)
        try:
            theirs = aside(ids[mine:])
        except OSError:  # no process forked (the system's limit, its memory): this one reads them all
            mine, theirs = len(ids), list  # and nothing read aside
        for case_id, case, data in [*_read_some(self.store, ids[:mine]), *theirs()]:
            self.cases[case_id], self.files[case_id] = case, data

    def read(self, case_id: str) -> Case:
        if case_id not in self.cases:
            self.cases[case_id], self.files[case_id] = self.store.read_case_file(case_id)
        return self.cases[case_id]

    def raw(self, case_id: str) -> bytes:
        if case_id not in self.files:
            self.read(case_id)
        return self.files[case_id]


# A build with at least this many cases to read has a process forked to read part of them (`_ReadAside`):
# fewer, and the fork and the pickles cost more than they save. Its part is a little under half: it also
# pickles what it read (a quarter of the reading's time), which this process then loads (a tenth).
READ_ASIDE_FROM = 400
READ_ASIDE_SHARE = 0.45

_ReadAside = Callable[[Sequence[str]], Callable[[], list[tuple[str, Case, bytes]]]]


def _read_some(store: Store, ids: Sequence[str]) -> list[tuple[str, Case, bytes]]:
    """The cases at `ids` that read without a fault, with their files' bytes (a forked reader's job: the build
    reads a case that failed here itself, and names its fault as it always does)."""
    read: list[tuple[str, Case, bytes]] = []
    for case_id in ids:
        with suppress(Exception):  # whatever it raises, the build raises it again when it reads the case
            read.append((case_id, *store.read_case_file(case_id)))
    return read


def _shard(case_id: str) -> int:
    return zlib.crc32(case_id.encode()) % _CARD_SHARDS


def _known_cards(data: bytes | None) -> tuple[int, dict[str, tuple[tuple[int, int, int], Card]]]:
    """One shard of the last build's look at cases/ (when, each file's stat and card); nothing from a
    shard it can't read.

    Pickled, as black and pip keep their caches: the cache is this build's own, in the data root's state
    (never in git), and 10,000 cards load in a tenth of the time JSON takes."""
    try:
        found = pickle.loads(data) if data else {}
        if not isinstance(found, dict) or found.get("format") != _FORMAT:
            return 0, {}
        return int(found["looked"]), dict(found["cards"])
    except Exception:  # whatever an unreadable cache raises, it is not used
        return 0, {}


def _kept_card(old: tuple[tuple[int, int, int], Card] | None, stat: tuple[int, int, int], looked: int) -> Card | None:
    """The last build's card of a case (`old`: its file's stat then, and its card), when the file is as it
    was then and was not changed within the racy window of that look (`looked`): else the case is read."""
    if old is not None and old[0] == stat and stat[2] < looked - _RACY_NS and isinstance(old[1], Card):
        return old[1]
    return None


def _cards(
    store: Store, tree: SiteTree, cases: _Cases, aside: _ReadAside | None = None
) -> tuple[list[Card], dict[str, list[Card]], dict[str, dict[str, Any]]]:
    """Every case's card, the cases changed since the last build (or gone) with their cards then and now,
    and the shards of the cards' cache to write: those holding a case read this time, or gone (pickled at
    the build's end, with what the cards cached during it: `Card.facet_row`, ...). The cache is in shards
    so that a rebuild after one edit writes one sixteenth of it; a shard not written keeps its older
    look, which only makes its cards' racy window stricter. With `aside`, the cases to read, when there are
    many, are read ahead, part of them by a forked process (`_Cases.read_ahead`)."""
    looks: list[int] = []
    known: dict[str, tuple[tuple[int, int, int], Card]] = {}
    for n in range(_CARD_SHARDS):
        looked_then, found = _known_cards(tree.read_cache(_CARDS.format(n)))
        looks.append(looked_then)
        known.update(found)
    looked = time.time_ns()
    stats = store.record_stats("case")
    reused = {case_id: _kept_card(known.get(case_id), stat, looks[_shard(case_id)]) for case_id, stat in stats.items()}
    unknown = [case_id for case_id, card in reused.items() if card is None]
    if aside is not None and len(unknown) >= READ_ASIDE_FROM:
        cases.read_ahead(unknown, aside)
    cards: list[Card] = []
    changed: dict[str, list[Card]] = {}
    kept: list[dict[str, tuple[tuple[int, int, int], Card]]] = [{} for _ in range(_CARD_SHARDS)]
    dirty: set[int] = set()
    for case_id, stat in stats.items():
        shard = _shard(case_id)
        old = known.get(case_id)
        card = reused[case_id]
        if card is None:
            card = Card.of(cases.read(case_id), cases.raw(case_id))
            dirty.add(shard)
            if old is None or old[1].digest != card.digest:
                changed[case_id] = [card] if old is None else [old[1], card]
        cards.append(card)
        kept[shard][case_id] = (stat, card)
    for case_id in set(known) - set().union(*kept):
        changed[case_id] = [known[case_id][1]]
        dirty.add(_shard(case_id))
    shards = {_CARDS.format(n): {"format": _FORMAT, "looked": looked, "cards": kept[n]} for n in sorted(dirty)}
    return cards, changed, shards


def site_context(store: Store, settings: Settings) -> SiteContext:
    """What the site is built from: the data root's cases (all read), the site's base, its links' states, now."""
    cases = _Cases(store)
    return _context(store, settings, _all_cards(store, cases), cases)


def _all_cards(store: Store, cases: _Cases) -> list[Card]:
    """Every case's card, each case read (and kept by `cases`)."""
    return [Card.of(cases.read(i), cases.raw(i)) for i in store.record_stats("case")]


@dataclass(frozen=True)
class _Shown:
    """What the pages show of the settings (never the settings whole: they hold the archive's keys, and a
    worker's start file is a file), and the build's time."""

    base_url: str
    note: dict[str, str]
    licence: tuple[str, str]
    built_at: datetime

    @classmethod
    def of(cls, settings: Settings, built_at: datetime) -> _Shown:
        return cls(
            settings.public_base_url,
            dict(settings.site_note),
            (settings.site_licence, settings.site_licence_url),
            built_at,
        )

    def edition(self, store: Store) -> SiteEdition:
        """The site's edition: these, with the links' states and the sources' licences as the data root has them."""
        links, licences = store.state.read_links(), source_licences(store)
        return SiteEdition(self.base_url, self.built_at, links, self.note, self.licence, licences)


def _context(
    store: Store, settings: Settings, cards: Iterable[Card], cases: _Cases, built_at: datetime | None = None
) -> SiteContext:
    edition = _Shown.of(settings, built_at or utc_now()).edition(store)
    return SiteContext.of_cards(cards, load=cases.read, raw=cases.raw, edition=edition)


def source_licences(store: Store) -> dict[str, str]:
    """What the registry says of its sources' licences (SourceEntry.licence), by URL; an entry that fails to
    parse says nothing (`validate` reports it)."""
    registered, _ = store.read_sources()
    return {source.entry.url: source.entry.licence for source in registered if source.entry.licence}


# ---------------------------------------------------------------- making many files on every core

# Below this many files to make, a build makes them itself (a worker process takes a second to start).
PARALLEL_FROM = 2000
# A build that will make every file (a new folder, new code) of a library this large starts its workers
# first thing: each reads and plans the site itself while this process does, and is ready for its share
# when this process has planned (a case brings at least this many files: its pages, its record, its
# short address).
FILES_PER_CASE = 4
# What the build's processes do besides making pages, in pages' worth (measured at 1,000 and 10,000 cases:
# a page 0.35-0.45 ms made and written): a worker started first thing is ready a little after this
# process has planned; one started then reads and plans the site first (about a page's time a case); this
# process makes the search index, the API files and the rest while the workers make pages (about 1 ms a case).
WORKER_START = 200
MAIN_PER_CASE = 1.5


def _shares(keys: list[str], workers: int, cases: int, start: int = WORKER_START) -> list[list[str]]:
    """`keys` dealt out to this process (the first list) and `workers - 1` workers, in turn, so that each
    gets its share of every kind of file, and in proportion, so that all finish together: this process
    has the build's other work to do (`MAIN_PER_CASE`), a worker its start (`start`, in pages' worth)."""
    total = len(keys) + int(MAIN_PER_CASE * cases) + start * (workers - 1)
    mine = min(len(keys), max(0, int(total // workers - MAIN_PER_CASE * cases)))
    parts: list[list[str]] = [[] for _ in range(workers)]
    given, turn = 0, 0
    for n, key in enumerate(keys):
        if (n + 1) * mine // len(keys) > given:  # this process's share, spread evenly
            parts[0].append(key)
            given += 1
        else:
            parts[1 + turn % (workers - 1)].append(key)
            turn += 1
    return parts


@dataclass(frozen=True)
class WorkerStart:
    """What a worker reads and plans the site with (its start file): the data root, what the pages show of
    the settings and the build's time, and the site's folder. A worker reads the cases and plans the site
    itself, with the same pure functions as the build, so that it is ready for its share when the build
    has planned."""

    root: Path
    shown: _Shown
    folder: Path

    def ready(self) -> tuple[SiteContext, dict[str, Planned]]:
        """The site as the build sees it: its context (every case read) and every file planned."""
        store = Store(self.root)
        cases = _Cases(store)
        edition = self.shown.edition(store)
        ctx = SiteContext.of_cards(_all_cards(store, cases), load=cases.read, raw=cases.raw, edition=edition)
        return ctx, plan(ctx)


@dataclass(frozen=True)
class WorkerShare:
    """A worker's share of a build (its share file, named on its standard input when the build has planned):
    the keys of the files it makes, the hashes the tree's cache knows of them, and what the build planned
    from (`_plan_mark`, `_cards_mark`): a worker that read other cases or settings makes nothing."""

    keys: list[str]
    known: dict[str, bytes]
    mark: bytes
    cards: bytes


class CasesMoved(Exception):
    """A worker read other cases or settings than the build planned from (a case written meanwhile)."""


class BuildGone(Exception):
    """A worker's build stopped (killed) while the worker made its share."""


def work(
    start: WorkerStart, share: Callable[[], WorkerShare | None], alive: Callable[[], bool] = lambda: True
) -> dict[str, tuple[bytes, bool]]:
    """A worker's part (`pipeline.site.worker`): read and plan the site, take the share when the build sends
    it (`share`: None, nothing to make), make those files and write each into the site's folder unless it
    holds it already (as `SiteTree.sync` does, not synced: the build syncs once at its end); each file's
    hash, and whether it was written. Before each file it asks whether the build is still there (`alive`):
    a build killed meanwhile leaves its folder to the next build, which a worker writing on would race."""
    with _no_collections():
        ctx, planned = start.ready()
        given = share()
        if given is None or not given.keys:
            return {}
        if given.mark != _plan_mark(ctx) or given.cards != _cards_mark(ctx.cases):
            raise CasesMoved("the cases or the site's settings changed while the site was built")
        return _made_and_written(planned, given.keys, start.folder, given.known, alive)


def _made_and_written(
    planned: dict[str, Planned],
    keys: Iterable[str],
    folder: Path,
    known: dict[str, bytes],
    alive: Callable[[], bool] = lambda: True,
    found: Collection[str] | None = None,
) -> dict[str, tuple[bytes, bool]]:
    """The files at `keys` made and each written into `folder` unless it holds them already, as
    `SiteTree.sync` writes (`write_unless_known`; not synced: the build syncs once at its end): each file's
    hash and whether it was written. `alive` is asked before each file (BuildGone when it says no); `found`:
    the files in the folder when the build walked it (`SiteTree.found`)."""
    written: dict[str, tuple[bytes, bool]] = {}
    for key in keys:
        if not alive():
            raise BuildGone("the build stopped")
        data = planned[key].make()
        if not alive():  # a file can take seconds to make (cases.db): asked again before it is written
            raise BuildGone("the build stopped")
        written[key] = write_unless_known(folder, key, data, known, False, found)
    return written


def _cards_mark(cards: Iterable[Card]) -> bytes:
    """The cases a site is planned from, as one hash of their ids and digests."""
    return _hash("\x00".join(f"{card.id}\x00{card.digest}" for card in cards))


class _Shares:
    """The files to make, shared between this process and worker processes (`_Workers.deal`): dealt out
    beforehand (`mine`, and each started worker's part), or standing in a `line` that this process and the
    forked workers take from as they go (each forked worker's part then the files it makes first)."""

    def __init__(
        self,
        planned: dict[str, Planned],
        mine: list[str],
        theirs: list[tuple[_Worker, list[str]]],
        folder: Path | None = None,
        known: dict[str, bytes] | None = None,
        line: Line | None = None,
        found: Collection[str] | None = None,
        answer: Answer | None = None,
    ) -> None:
        self.planned = planned
        self.mine = mine
        self.theirs = theirs
        self.folder = folder
        self.known = known or {}
        self.line = line
        self.found = found  # the files in the folder when the build walked it
        self.answer = answer  # to the forked worker offered the files aside
        self.settled = False
        self.wrote: dict[str, tuple[bytes, bool]] = {}

    def settle(self, take: bool) -> bool:
        """Whether a worker makes the files `deal` was given `aside`: the forked worker offered them is told
        `take` (the caller makes them when it is not: True only then)."""
        if self.answer is None or not self.theirs or not self.theirs[0][1] or self.settled:
            return False
        self.settled = True
        self.answer.give(take)
        if not take:
            self.theirs[0] = (self.theirs[0][0], [])
        return take

    def own(self, more: Callable[[], bool] = lambda: True) -> dict[str, bytes]:
        """This process's share, made now: for the caller to write, or, when workers make theirs, written
        into the folder now as they do (`write_unless_known`), so that what is left to write when the
        workers are done is the search index and the assembled files only (taken in by `others`). From a
        line: the runs this process takes from its back while `more()` says so and any is left."""
        if self.line is not None and self.folder is not None:
            while more() and (keys := self.line.take(front=False)):
                self.wrote.update(_made_and_written(self.planned, keys, self.folder, self.known, found=self.found))
            return {}
        if not self.theirs or self.folder is None:
            return {key: self.planned[key].make() for key in self.mine}
        self.wrote.update(_made_and_written(self.planned, self.mine, self.folder, self.known, found=self.found))
        return {}

    def besides(self, made: dict[str, bytes]) -> dict[str, bytes]:
        """Files this process made besides its pages (the assembled files, the search index). When workers
        make pages, which they write as they go (the build ending with one sync of all), these are written
        now, as `own` writes this process's share, while the workers are still at work (taken in by
        `others`): left to the caller's sync, they were written when no other process was at work, and on
        a slow disk the search index's 700 files of a 1,000-case site took up to 0.3 s there. Else they are
        returned, for the caller's sync to write (each synced, when they are few)."""
        if self.folder is None or (self.line is None and not self.theirs):
            return made
        for key, data in made.items():
            self.wrote[key] = write_unless_known(self.folder, key, data, self.known, False, self.found)
        return {}

    def others(self) -> tuple[dict[str, bytes], dict[str, tuple[bytes, bool]]]:
        """The workers' shares, waited for: what they (and `own`) wrote into the folder themselves (each
        file's hash and whether it was written, for `Wanted.aside`), and the bytes of the share of a worker
        that failed (it said why on standard error), made here for the caller to write: from a line, every
        file of the line and of the failed worker's part that no process wrote."""
        if self.line is not None:
            self.own()  # what is left of the line
        self.settle(False)  # when never asked: the worker offered the files aside waits for no answer
        made: dict[str, bytes] = {}
        wrote: dict[str, tuple[bytes, bool]] = dict(self.wrote)
        failed: list[tuple[_Worker, list[str]]] = []
        while self.theirs:
            worker, part = self.theirs.pop(0)
            done = worker.result()
            if done is not None:
                wrote.update(done)
            else:
                failed.append((worker, part))
        for worker, part in failed:
            # From a line, what a failed worker took is not known: any file no process reported.
            left = [key for key in ([*part, *self.line.keys] if self.line is not None else part) if key not in wrote]
            if self.folder is not None:  # killed mid-write, it may have left a temporary file
                _remove_temporary(self.folder, left, worker.process.pid)
            made.update({key: self.planned[key].make() for key in left if key not in made})
        return made, wrote


def _remove_temporary(folder: Path, keys: Iterable[str], pid: int) -> None:
    """The temporary files a worker (`pid`) left in the folders of its keys."""
    for parent in sorted({key.rpartition("/")[0] for key in keys}):
        try:
            with os.scandir(folder / parent if parent else folder) as entries:
                names = [entry.name for entry in entries if is_temporary(entry.name, pid)]
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            (folder / parent / name).unlink(missing_ok=True)


def _in_line(keys: list[str], langs: Sequence[str]) -> list[str]:
    """The files to make in the order they stand in a line: the first language's pages, the files outside
    the languages' folders, the other languages' pages. A language's pages share much of their making (a
    listing's cards, its frame, a case's facts), and the processes take from the line's two ends: each
    makes mostly one language's pages."""
    blocks: dict[str, list[str]] = {lang: [] for lang in langs}
    others: list[str] = []
    for key in keys:
        blocks.get(key.partition("/")[0], others).append(key)
    first, *rest = blocks.values() if blocks else [[]]
    return [*first, *others, *chain.from_iterable(rest)]


def _from_the_front(
    planned: dict[str, Planned],
    line: Line,
    first: list[str],
    answer: Answer,
    folder: Path,
    known: dict[str, bytes],
    build: int,
    found: Collection[str] | None,
) -> dict[str, tuple[bytes, bool]]:
    """A forked worker's part: the runs of the line it takes from the front, and the files at `first`
    (cases.db) as soon as the build answers that it is to make them (`_Shares.settle`), each written into the
    folder unless it holds it already; each file's hash and whether it was written. It stops when its build
    (`build`, its parent) is gone."""
    answer.forked()

    def alive() -> bool:
        return os.getppid() == build

    written: dict[str, tuple[bytes, bool]] = {}

    def make(keys: list[str]) -> None:
        written.update(_made_and_written(planned, keys, folder, known, alive, found))

    pending = bool(first)
    while True:
        if pending and (take := answer.given()) is not None:
            pending = False
            if take:
                make(first)
        keys = line.take(front=True)
        if not keys:
            break
        make(keys)
    if pending and answer.wait():
        make(first)
    return written


@dataclass
class _Worker:
    """A worker process and the file it pickles what it wrote into: forked (`pipeline.site.forked`, a `Child`),
    or started (`pipeline.site.worker START RESULT`: its start file read, it waits on its standard input for
    the name of its share file; an empty line or none, its build gone: nothing for it to make)."""

    process: subprocess.Popen[bytes] | Child
    made: Path  # its RESULT file

    def send(self, share: Path) -> bool:
        """Tell the worker its share file; False when it stopped already."""
        assert isinstance(self.process, subprocess.Popen) and self.process.stdin is not None
        try:
            self.process.stdin.write(f"{share}\n".encode())
            self.process.stdin.close()
        except (BrokenPipeError, OSError):
            return False
        return True

    def result(self) -> dict[str, tuple[bytes, bool]] | None:
        """What it wrote, waited for; None when it failed."""
        if self.process.wait() == 0 and self.made.is_file():
            found: dict[str, tuple[bytes, bool]] = pickle.loads(self.made.read_bytes())
            return found
        return None


class _Workers:
    """The worker processes of one build, in a private temporary folder of the data root's state (a build
    killed leaves it to the next): started first thing (`start`) when the build will make every file of a
    large library, else when it has planned, if it has enough files to make (`deal`). Workers still running
    when the build stops (an error) are stopped."""

    def __init__(self, store: Store, settings: Settings, folder: Path, built_at: datetime, count: int) -> None:
        self.store = store
        self.start_job = WorkerStart(store.root, _Shown.of(settings, built_at), folder)
        self.count = count
        self.started: list[_Worker] = []
        self.readers: list[_Worker] = []  # forked to read cases (`reader`)
        self.early = False
        self.how = "none"  # BuildReport.workers
        self._stack = ExitStack()
        self._folder: Path | None = None

    def __enter__(self) -> _Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            # Not taken in: the build stopped, a worker had nothing to make, a reader's cases were not needed.
            for worker in [*self.started, *self.readers]:
                if worker.process.poll() is None:
                    worker.process.kill()
                worker.process.wait()
            self._close()
        finally:
            self._stack.close()

    def _scratch(self) -> Path:
        """The build's private folder in the data root's state (a killed build leaves it to the next), made
        when first asked for: the workers' start and share files, what workers and readers pickle."""
        if self._folder is None:
            self._folder = self._stack.enter_context(self.store.state.scratch("site"))
        return self._folder

    def reader(self) -> _ReadAside | None:
        """What reads cases in a process forked now (`_Cases.read_ahead`), when this build may fork (more
        than one core, this process running one thread, no worker started yet); else None. What it read
        is taken in when asked for; a reader that failed read nothing, and the build reads its cases."""
        if self.count <= 1 or self.started or not single_threaded():
            return None

        def aside(ids: Sequence[str]) -> Callable[[], list[tuple[str, Case, bytes]]]:
            made = self._scratch() / f"read-{len(self.readers)}.pickle"
            fork(
                partial(_read_some, self.store, list(ids)),
                made,
                lambda child: self.readers.append(_Worker(child, made)),
            )
            reader = self.readers[-1]

            def taken() -> list[tuple[str, Case, bytes]]:
                if reader.process.wait() != 0:
                    return []
                try:
                    read: list[tuple[str, Case, bytes]] = pickle.loads(made.read_bytes())
                except (OSError, EOFError, pickle.UnpicklingError):  # what it left can't be read: none of it
                    return []
                return read

            return taken

        return aside

    def start(self, early: bool = False) -> None:
        """Start `count - 1` workers now (each reads and plans the site meanwhile); `early`: before this
        process has read the cases."""
        self.early = early
        folder = self._scratch()
        given = folder / "start.pickle"
        given.write_bytes(pickle.dumps(self.start_job, protocol=pickle.HIGHEST_PROTOCOL))
        for n in range(len(self.started), self.count - 1):
            result = folder / f"made-{n}.pickle"
            command = [sys.executable, "-m", "pipeline.site.worker", str(given), str(result)]
            self.started.append(_Worker(subprocess.Popen(command, stdin=subprocess.PIPE), result))

    def deal(
        self,
        ctx: SiteContext,
        planned: dict[str, Planned],
        keys: list[str],
        known: dict[str, bytes],
        aside: Sequence[str] = (),
        found: Collection[str] | None = None,
    ) -> _Shares:
        """`keys` shared between this process and the workers (started now when there are enough, and none
        was), each worker told its share; the tree's cache (`known`) says which of its files it need not
        write. This process runs one thread only: the workers are forked now, with its plan (`_forked`), and
        the first makes the files `aside` first (cases.db); else they are started (`start`) and `aside` is
        the caller's to make (`_Shares.settle`)."""
        if self.count <= 1 or (len(keys) < PARALLEL_FROM and not self.started):
            return self._nothing(planned, keys)
        if not self.started and single_threaded():
            return self._forked(ctx, planned, keys, known, aside, found)
        start = WORKER_START if self.early else WORKER_START + len(ctx.cases)
        parts = _shares(keys, self.count, len(ctx.cases), start)
        if not any(parts[1:]):  # too few to share: a worker would only start
            return self._nothing(planned, keys)
        if not self.started:
            self.start()
        scratch = self._scratch()
        mark, cards = _plan_mark(ctx), _cards_mark(ctx.cases)
        theirs: list[tuple[_Worker, list[str]]] = []
        mine = parts[0]
        for n, (worker, part) in enumerate(zip(self.started, parts[1:], strict=True)):
            share = scratch / f"share-{n}.pickle"
            job = WorkerShare(part, {key: known[key] for key in part if key in known}, mark, cards)
            share.write_bytes(pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
            if worker.send(share):
                theirs.append((worker, part))
            else:
                mine = mine + part  # a worker that stopped already: its share made here
        self.how = "started" if theirs else "none"
        return _Shares(planned, mine, theirs, self.start_job.folder, known, found=found)

    def _forked(
        self,
        ctx: SiteContext,
        planned: dict[str, Planned],
        keys: list[str],
        known: dict[str, bytes],
        aside: Sequence[str],
        found: Collection[str] | None,
    ) -> _Shares:
        """The workers forked now (`pipeline.site.forked`), `keys` standing in a line (`_in_line`) that they
        take from its front and this process from its back; the first worker makes `aside` first."""
        scratch = self._scratch()
        line = Line(_in_line(keys, ctx.langs))
        answer = Answer()
        self._stack.callback(line.close)
        self._stack.callback(answer.close)
        folder, build = self.start_job.folder, os.getpid()
        theirs: list[tuple[_Worker, list[str]]] = []
        for n in range(self.count - 1):
            first = list(aside) if n == 0 else []
            made = scratch / f"made-{n}.pickle"
            job = partial(_from_the_front, planned, line, first, answer, folder, known, build, found)

            def keep(child: Child, made: Path = made, first: list[str] = first) -> None:
                worker = _Worker(child, made)
                self.started.append(worker)  # killed and waited for, whatever happens next
                theirs.append((worker, first))

            fork(job, made, keep, quiet=(BuildGone,))
        self.how = "forked"
        return _Shares(planned, [], theirs, folder, known, line, found, answer)

    def _nothing(self, planned: dict[str, Planned], keys: list[str]) -> _Shares:
        for worker in self.started:  # started first thing, and not needed after all: stopped now
            worker.process.kill()
        return _Shares(planned, keys, [])

    def _close(self) -> None:
        for worker in self.started:
            if not isinstance(worker.process, subprocess.Popen):
                continue
            if worker.process.stdin is not None and not worker.process.stdin.closed:
                with suppress(OSError):
                    worker.process.stdin.close()


# ---------------------------------------------------------------- the build


def _hash(text: str) -> bytes:
    return tree_hash(text.encode())


@cache
def _site_code() -> str:
    """The site's code and templates, and the vocabulary (its labels head listings), as one hash."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for path in sorted(
        [*here.rglob("*.py"), *here.joinpath("templates").rglob("*"), *here.joinpath("static").rglob("*")]
    ):
        if path.is_file():
            digest.update(path.relative_to(here).as_posix().encode() + b"\x00" + path.read_bytes())
    digest.update(here.parent.joinpath("vocabulary.yaml").read_bytes())
    digest.update(here.parent.joinpath("render.py").read_bytes())  # the texts' HTML and assets/markdown.json
    return digest.hexdigest()


def _plan_mark(ctx: SiteContext) -> bytes:
    """What the plan of every file depends on besides the cases: the code, the base, the note, the
    languages, the links' states. A build whose mark is not the last build's plans every group."""
    links = "\x00".join(f"{url}\x00{state.model_dump_json()}" for url, state in sorted(ctx.links.items()))
    return _hash(
        "\x00".join(
            [
                _FORMAT,
                _site_code(),
                ctx.base_url,
                repr(sorted(ctx.note.items())),
                repr(ctx.langs),
                links,
                repr(ctx.licence),
                repr(sorted(ctx.licences.items())),
            ]
        )
    )


def _carried(last: Any, before: dict[str, bytes], dirty: set[str] | None) -> dict[str, list[str]] | None:
    """The last build's groups not planned again (not in `dirty`), with their files: as it planned them,
    their inputs as it recorded. None when there is nothing to carry over: every group is planned."""
    if dirty is None or not isinstance(last, dict):
        return None
    carried = {group: keys for group, keys in last.items() if group not in dirty}
    if not all(isinstance(keys, list) and all(key in before for key in keys) for keys in carried.values()):
        return None  # a cache that does not agree with itself: trusted in nothing
    return carried


def _previous(tree: SiteTree, spans: dict[str, Any]) -> Callable[[str], Previous | None]:
    """The last build's assembled file at `key` and where its pieces lie, when its bytes are as recorded."""

    def previous(key: str) -> Previous | None:
        entry = spans.get(key)
        data = tree.read_file(key) if entry else None
        if entry is None or data is None or tree_hash(data) != entry.get("hash"):
            return None
        return data, entry["spans"]

    return previous


def _read_spans(data: bytes | None) -> dict[str, Any]:
    try:
        found = pickle.loads(data) if data else {}
    except Exception:  # whatever an unreadable cache raises, it is not used
        return {}
    return found["files"] if isinstance(found, dict) and found.get("format") == _FORMAT else {}


def _all_docs(ctx: SiteContext, stems: search.Stems, analysed: bool = False) -> list[search.SearchDoc]:
    return search.search_docs((ctx.case(card.id) for card in ctx.cases), stems, ctx.langs, analysed)


def _search_index(
    ctx: SiteContext,
    stems: search.Stems,
    changed: set[str],
    known: dict[str, bytes],
    read: Callable[[str], bytes | None],
    read_kept: Callable[[str], bytes | None],
) -> tuple[search.IndexUpdate, dict[str, Any]]:
    """The search index: the last build's updated with the changed cases' documents (`search.update_index`),
    or made whole when there is none to update. The last index's files are read only when their bytes
    hash as the last complete build recorded (`known`): an index half written by a crash is made anew.
    Its bookkeeping comes from the build's state (`read_kept`, `_keep_bookkeeping`), asked only when
    `known` is the last build's: a build that did not finish, or ran other code, leaves `known` empty."""

    def previous(key: str) -> bytes | None:
        if search.bookkeeping(key):
            return read_kept(key)
        data = read(key) if key in known else None
        return data if data is not None and tree_hash(data) == known[key] else None

    if known:
        docs: dict[tuple[str, str], search.SearchDoc | None] = {}
        by_id = {card.id for card in ctx.cases}
        for case_id in sorted(changed):
            for lang in ctx.langs:
                docs[(lang, case_id)] = search.search_doc(ctx.case(case_id), lang, stems) if case_id in by_id else None
        update = search.update_index(previous, docs)
        if update is not None:
            return update, {"update": "changed", "documents": len(docs), "pages": _searchable(ctx)}
    # With no index to update, every case's Korean words were analysed at the build's start.
    whole = _all_docs(ctx, stems, analysed=not known)
    return search.IndexUpdate(files=search.index_files(whole)), {
        "update": "whole",
        "documents": len(whole),
        "pages": _searchable(ctx),
    }


def _keep_bookkeeping(
    tree: SiteTree, files: dict[str, bytes], kept: Iterable[str]
) -> tuple[dict[str, bytes], list[str]]:
    """The search index's files to publish (written, or kept as they are), its bookkeeping for updates
    (`search.bookkeeping`: keys/, live.json, about 2.8 % of the site's bytes) set aside: written among the
    folder's build state under the same paths, and what of it the index no longer has removed there.
    No reader fetches it, so it is not published (issue 38: no build state in the site). Written after the
    build's unfinished mark and before its end, so that a build that dies between leaves the next one
    trusting none of it (`_search_index`)."""
    books = {key: data for key, data in files.items() if search.bookkeeping(key)}
    published = {key: data for key, data in files.items() if key not in books}
    left = [key for key in kept if not search.bookkeeping(key)]
    wanted = books.keys() | set(kept).difference(left)
    for name in tree.cached(search.ROOT):
        if name not in wanted:
            tree.remove_cache(name)
    for key, data in books.items():
        tree.write_cache(key, data)
    return published, left


def _searchable(ctx: SiteContext) -> dict[str, int]:
    """The case pages the index holds, by language: every case's but a withdrawn one's (search.search_doc)."""
    count = sum(search.searchable(card) for card in ctx.cases)
    return {lang: count for lang in ctx.langs}


@contextmanager
def _no_collections() -> Iterator[None]:
    """The cyclic garbage collector paused: a build makes hundreds of thousands of objects that live until
    its end, and the collector, walking them all again and again, took a third of a rebuild's time. What
    the build leaves is collected once, after it."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
            # The build's objects, all still in the youngest generation, collected now: left there, they
            # made each following build in the same process (a server's) slower by a tenth.
            gc.collect(0)  # the youngest generation alone: the process's older objects are not walked again


def build_site(store: Store, settings: Settings, out: Path | None = None, *, workers: int | None = None) -> BuildReport:
    """Build the site from the data root's cases into `out` (default: the data root's site/), doing and
    writing only what changed; see the module's docstring. A build with many files to make makes them on
    `workers` processes (default: one a core; 1: this one only)."""
    with _no_collections():
        return _build_site(store, settings, out, workers)


def _to_make(
    planned: dict[str, Planned], before: dict[str, bytes], carried: dict[str, list[str]] | None
) -> tuple[list[str], dict[str, bytes], list[str], dict[str, list[str]]]:
    """The files to make: those whose inputs differ from the last build's (`before`); with each file's
    inputs' hash (none yet when there is no last build to compare with: the caller hashes them later), the
    files to find as they are (carried over, or their inputs unchanged: `SiteTree.sync` checks that they
    are still there) and the keys of each group."""
    inputs: dict[str, bytes] = {}
    present: list[str] = []
    grouped: dict[str, list[str]] = dict(carried or {})
    for keys in grouped.values():
        present += keys
        inputs.update((key, before[key]) for key in keys)
    to_make: list[str] = []
    for key, item in planned.items():
        if item.group != EVERY:
            if item.inputs is None:  # it would be made only when its group is planned, and lost otherwise
                raise ValueError(f"{key}: a file of the group {item.group!r} is planned with no inputs")
            grouped.setdefault(item.group, []).append(key)
        if item.inputs is not None and before:
            inputs[key] = _hash(item.inputs)
            if before.get(key) == inputs[key]:
                present.append(key)
                continue
        to_make.append(key)
    return to_make, inputs, present, grouped


def _build_site(store: Store, settings: Settings, out: Path | None, workers: int | None) -> BuildReport:
    started = time.perf_counter()
    store.state.remove_stale_scratch()  # what a build killed before (or any process of this root's) left behind
    tree = SiteTree(store.state, out or site_dir(store))
    # A build that did not finish (a crash, Ctrl-C) leaves its mark: its files may be newer than every
    # cache says, so the next build trusts none of what they say of the folder (it walks it, compares
    # each file's bytes and makes the search index whole). Cards are checked against cases/ anyway.
    unfinished = tree.read_cache(_BUILDING) is not None
    last_sync = {} if unfinished else tree.last()  # none either for a folder removed or emptied since
    built_at = utc_now()
    parallel = workers or os.cpu_count() or 1
    with _Workers(store, settings, tree.folder, built_at, parallel) as helpers:
        # A build that will make every file (no last build here, or new code) of a large library starts
        # its workers first thing: they read and plan the site while this process does.
        same_code = last_sync.get("plan", {}).get("code") == _site_code()
        if (
            parallel > 1
            and not same_code
            and not single_threaded()
            and FILES_PER_CASE * len(store.ids("case")) >= PARALLEL_FROM
        ):
            helpers.start(early=True)
        return _build_in(store, settings, tree, helpers, unfinished, last_sync, same_code, built_at, started)


def _keep_cards(tree: SiteTree, shards: dict[str, dict[str, Any]]) -> None:
    """The shards of the cards' cache written, each card with what it works out once (`Card.CACHED`), there
    to keep whichever process made the files that asked for it (a forked worker's cards are its own):
    else every later build works it out again."""
    for name, shard in shards.items():
        for _, card in shard["cards"].values():
            for value in Card.CACHED:
                getattr(card, value)
        tree.write_cache(name, pickle.dumps(shard, protocol=pickle.HIGHEST_PROTOCOL))


def _build_in(
    store: Store,
    settings: Settings,
    tree: SiteTree,
    helpers: _Workers,
    unfinished: bool,
    last_sync: dict[str, Any],
    same_code: bool,
    built_at: datetime,
    started: float,
) -> BuildReport:
    cases = _Cases(store)
    cards, changed, cards_cache = _cards(store, tree, cases, helpers.reader())
    ctx = _context(store, settings, cards, cases, built_at)
    last = last_sync.get("plan", {})
    # A file's inputs are compared with the last build's only when that build ran the same code (`same_code`:
    # its plan's code is this one's): new code (a template, a label, the pages' modules) makes every file
    # again, and writes those whose bytes changed.
    before = last_sync.get("inputs", {}) if same_code else {}
    mark = _plan_mark(ctx)
    # The groups of files planned again: those showing a changed case (then or now), when the last build
    # planned from the same code and settings; every group otherwise. Any other is as last planned.
    dirty = groups(ctx, chain.from_iterable(changed.values())) if last.get("mark") == mark else None
    carried = _carried(last.get("groups", {}), before, dirty)
    stems = search.Stems.load(store.state.read(_STEMS))
    # The index is updated in place only when it was made by the same code and vocabulary (its documents
    # hold the terms' labels): else it is made whole.
    known = last_sync.get("files", {}) if same_code else {}
    ids = [card.id for card in ctx.cases]
    indexed_now = ids if not known else sorted(set(changed) & set(ids))
    # api/v1/cases.db (pipeline.site.database), when a case or its code changed: made on a thread of its
    # own while the pages are, since most of its time is SQLite's, which lets go of Python's lock (copying
    # the unchanged cases' rows from the last file, the full-text index). Its unchanged cases' rows come
    # from the file the last build left, when that file is as it made it (an unfinished build's is not).
    last_db = None if unfinished else lambda: tree.read_file(database.KEY)
    db = database.Database(ctx, stems, lambda: tree.read_cache(database.CACHE), last_db or (lambda: None))
    db_inputs = _hash(_site_code() + db.inputs)
    aside = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cases-db")
    try:
        planned = plan(ctx, everything if carried is None or dirty is None else dirty.__contains__)
        files: dict[str, bytes] = {}
        to_make, inputs, present, grouped = _to_make(planned, before, carried)
        planned[database.KEY] = Planned(_site_code() + db.inputs, db.make)
        inputs[database.KEY] = db_inputs
        # The pages: this process's share first; the build's other work while the workers make theirs.
        # Marked before any file is written (the workers write theirs as they make them).
        if unfinished or last_sync.get("files") is None:  # the sync will trust no cache: it walks the folder
            tree.look()  # as found, before any file is written
        tree.write_cache(_BUILDING, b"a build of this folder began and has not finished\n")
        # cases.db, when a case or its code changed: offered to a forked worker, which makes it when this
        # process has found its cases' Korean words all analysed (the stems it needs are this process's),
        # else made here, on a thread of its own, once their stems are in. The tree's cache's hashes, and what
        # the folder held when walked: files a process need not read first.
        db_needed = before.get(database.KEY) != db_inputs
        aside_keys = [database.KEY] if db_needed else []
        shares = helpers.deal(ctx, planned, to_make, last_sync.get("files", {}), aside_keys, tree.found)
        # Once the workers have their shares: the Korean words the index's new documents need analysed
        # (aside, while the pages are made).
        words = search.korean_words(map(ctx.case, indexed_now), ctx.langs)
        db_elsewhere = db_needed and shares.settle(not stems.unknown(words))
        stemmed = stems.analyse_aside(words)

        def db_here() -> bytes:
            stemmed()
            return db.make()

        db_made = aside.submit(db_here) if db_needed and not db_elsewhere else None
        if not db_needed:
            present.append(database.KEY)
        if not before:  # nothing to compare them with: the inputs hashed for the next build once workers began
            inputs.update((key, _hash(item.inputs)) for key, item in planned.items() if item.inputs is not None)
        # Dealt out beforehand: this process's share first. From a line: the build's other work first, pages
        # while the stems are analysed, then pages until the line is empty (`others`).
        if shares.line is None:
            files.update(shares.own())
        assembled = api.assembled(ctx, _previous(tree, _read_spans(tree.read_cache(_SPANS))))
        files.update(shares.besides({key: made.data for key, made in assembled.items()}))
        if shares.line is not None:
            shares.own(more=lambda: not stemmed.ready())
        stemmed()
        index, indexed = _search_index(ctx, stems, set(changed), known, tree.read_file, tree.read_cache)
        index_files, index_kept = _keep_bookkeeping(tree, index.files, index.kept)
        files.update(shares.besides(index_files))
        present += index_kept
        made_here, written_aside = shares.others()
        if database.KEY in written_aside:  # made by a worker
            db.made_as(written_aside[database.KEY][0])
        files.update(made_here)
        kept = {"mark": mark, "code": _site_code(), "groups": grouped}
        # cases.db written when it is made, the other files meanwhile.
        later = {database.KEY: db_made.result} if db_made is not None else {}
        synced = tree.sync(
            Wanted(files, present=present, later=later, aside=written_aside, protect=KEEP, inputs=inputs, plan=kept),
            trusted=not unfinished,
            last=last_sync,
        )
        if db_made is not None:
            files[database.KEY] = db_made.result()
    finally:
        aside.shutdown(wait=True)
    hashes = synced.hashes  # of every file now (those of the assembled ones, for the next build's copy)
    if synced.missing:  # files of the last build deleted since: made again (the search index whole)
        if carried and any(key not in planned for key in synced.missing if key in inputs):
            planned = {**plan(ctx), database.KEY: planned[database.KEY]}  # every group planned
        lost = [key for key in synced.missing if key in planned]
        again = {key: planned[key].make() for key in lost}
        if len(lost) < len(synced.missing):
            again.update(_keep_bookkeeping(tree, search.index_files(_all_docs(ctx, stems)), [])[0])
            indexed["update"] = "whole"
        rest = [key for key in present if key not in again]
        already = {key: (digest, False) for key, (digest, _) in written_aside.items()}  # by the first sync
        redone = tree.sync(
            Wanted({**files, **again}, present=rest, aside=already, protect=KEEP, inputs=inputs, plan=kept)
        )
        synced.written += redone.written
        files.update(again)
        hashes = redone.hashes
    spans = {key: {"hash": hashes.get(key), "spans": made.spans} for key, made in assembled.items()}
    tree.write_cache(_SPANS, pickle.dumps({"format": _FORMAT, "files": spans}))
    if stems.changed:
        store.state.write(_STEMS, stems.dump(), durable=False)
    _keep_cards(tree, cards_cache)
    if db.kept:
        tree.write_cache(database.CACHE, db.cache())
    tree.remove_cache("cards.pickle")  # what builds before the shards kept
    tree.remove_cache("database-rows.pickle")  # what builds kept of cases.db before they copied its rows
    tree.remove_cache(_BUILDING)  # every cache now says what the folder holds
    return BuildReport(
        folder=str(tree.folder),
        cases=len(ctx.cases),
        written=synced.written,
        unchanged=len(synced.unchanged),
        removed=synced.removed,
        rendered=len(files) + len(written_aside),
        read=len(cases.files),
        search=indexed,
        workers=helpers.how,
        seconds=round(time.perf_counter() - started, 3),
    )
