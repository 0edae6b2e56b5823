"""The reviewer's queue, pure but for reading drafts: who is waiting for whom, and what each lacks;
and one draft (or published case) shown whole, field by field (`show`).

A draft file that cannot be read (broken by hand, misnamed) is listed as `unreadable`
with the reason, and the others are listed all the same: one bad file never hides the
queue, nor does the queue hide it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from pipeline.errors import RecordError, RecordNotFound, ReviewError
from pipeline.evidence import holds, overlaps
from pipeline.fields import ACTION_LISTS, NARRATIVE, PARTS
from pipeline.fragments import fragment_link
from pipeline.ids import is_case_id
from pipeline.merge import resolve
from pipeline.models import Case, Draft, DraftState, Evidence, utc_now
from pipeline.review import TRANSITIONS, ReviewAction, missing_for_publication
from pipeline.store import Store

__all__ = [
    "EVERY_DRAFT",
    "UNREADABLE",
    "Block",
    "QueueEntry",
    "QueueFilter",
    "Unreadable",
    "awaits",
    "entry_for",
    "evidence_url",
    "lacks",
    "queue",
    "queue_of",
    "read_drafts",
    "searchable",
    "show",
]

UNREADABLE = "unreadable"
# The order a person works through: what only a person can mend first, what waits for a reviewer, what is done.
_WORK_ORDER = (
    DraftState.WRITTEN,
    DraftState.IN_REVIEW,
    DraftState.CHANGES_REQUESTED,
    DraftState.EXTRACTED,
    DraftState.APPROVED,
    DraftState.PUBLISHED,
    DraftState.REJECTED,
    DraftState.MERGED,
)
_STATE_ORDER = [UNREADABLE, *(state.value for state in _WORK_ORDER)]
assert len(set(_WORK_ORDER)) == len(DraftState), "every draft state has its place in the queue's order"
_SORTS = ("age", "state", "org", "id")
# Each filter's name in the web page's query string (`/?state=written&q=dns`).
_PARAMETERS = {
    "states": "state",
    "org": "org",
    "component": "component",
    "older_than_days": "older_than",
    "writer": "writer",
    "search": "q",
    "sort": "sort",
}


@dataclass(frozen=True)
class QueueFilter:
    """Which drafts the queue lists, and in what order: the filters of `incidentlib queue` and of the web
    page's queue, checked when made (a ReviewError names an unknown state or sort).

    `states`: only drafts in one of these (`unreadable`: broken files); `org`: of this organisation (its
    org or org_slug, in any case); `component`: tagged with it; `older_than_days`; `writer`: signed by
    this person (in any case); `search`: holding all these words (any case) in the id, titles or text;
    `sort`: age (oldest first), state (in the order a person works through), org or id. An empty one
    filters nothing but merged drafts, which are done with for good: only `states` naming `merged` lists them."""

    states: tuple[str, ...] = ()
    org: str | None = None
    component: str | None = None
    older_than_days: float | None = None
    writer: str | None = None
    search: str | None = None
    sort: str = "age"

    def __post_init__(self) -> None:
        if self.sort not in _SORTS:
            raise ReviewError(f"--sort must be one of {', '.join(_SORTS)}, not {self.sort!r}")
        unknown = [s for s in self.states if s not in _STATE_ORDER]
        if unknown:
            raise ReviewError(f"unknown state {unknown[0]!r}; known: {', '.join(_STATE_ORDER)}")

    @classmethod
    def from_query(cls, query: Mapping[str, str], *, sort: str = "age") -> QueueFilter:
        """The filter a query string asks for (`state`, `org`, `component`, `older_than`, `writer`, `q`,
        `sort`): an empty parameter filters nothing, a missing `sort` is `sort`, and `state` may be given
        more than once when `query` has a `getlist` (a Starlette request's query_params). Raises
        ReviewError for an unknown state or sort, ValueError for an age that is no number."""
        name = _PARAMETERS
        getlist = getattr(query, "getlist", None)
        states = getlist(name["states"]) if getlist else [query.get(name["states"], "")]
        older_than = query.get(name["older_than_days"])
        return cls(
            states=tuple(state for state in states if state),
            org=query.get(name["org"]) or None,
            component=query.get(name["component"]) or None,
            older_than_days=float(older_than) if older_than else None,
            writer=query.get(name["writer"]) or None,
            search=query.get(name["search"]) or None,
            sort=query.get(name["sort"], sort),
        )

    def to_query(self) -> dict[str, str | list[str]]:
        """The filter as `from_query` reads it, every parameter ("" for one that filters nothing, a list
        for `state` when there are several): what the page's form shows."""
        values: dict[str, str | list[str] | None] = {
            "states": self.states[0] if len(self.states) == 1 else list(self.states),
            "org": self.org,
            "component": self.component,
            "older_than_days": None if self.older_than_days is None else f"{self.older_than_days:g}",
            "writer": self.writer,
            "search": self.search,
            "sort": self.sort,
        }
        return {_PARAMETERS[key]: value or "" for key, value in values.items()}

    def query_string(self, **change: Any) -> str:
        """The filter as a query string, with `change` on top (the page's `page_number`, another
        `state`); a parameter that is "" or None is left out."""
        given = {**self.to_query(), **change}
        return urlencode({key: value for key, value in given.items() if value}, doseq=True)

    @functools.cached_property
    def words(self) -> list[str]:
        return (self.search or "").casefold().split()

    def lets_through(self, draft: Draft, text_of: Callable[[Draft], str]) -> bool:
        """The draft passes every filter but the age (its queue entry's, `old_enough`); its text, the
        dearest to work out, is looked at last."""
        org = (self.org or "").casefold()
        return (
            (draft.state.value in self.states if self.states else draft.state != DraftState.MERGED)
            and (not org or org in ((draft.org or "").casefold(), (draft.org_slug or "").casefold()))
            and (not self.component or self.component in draft.components)
            and (not self.writer or self.writer.casefold() == (draft.review.written_by or "").casefold())
            and (not self.words or all(word in text_of(draft) for word in self.words))
        )

    def lets_through_unreadable(self, bad: Unreadable) -> bool:
        """All that is known of a broken file is its id and age: a filter on anything else leaves it out,
        unless the states ask for unreadable files."""
        if self.states:
            wanted = UNREADABLE in self.states
        else:
            wanted = not (self.org or self.component or self.writer or self.words)
        return wanted and self.old_enough(bad.age_days)

    def old_enough(self, age_days: float) -> bool:
        return self.older_than_days is None or age_days >= self.older_than_days


EVERY_DRAFT = QueueFilter()


@dataclass
class QueueEntry:
    id: str
    state: str
    org: str | None
    title: str | None
    age_days: float
    written_by: str | None
    components: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    fetch_failure: str | None = None
    problem: str | None = None  # why an unreadable draft's file cannot be read
    incidents: int = 0  # how many incidents the document tells, when several: the draft wants splitting
    duplicates: int = 0  # how many drafts or cases may tell the same incident: to merge or dismiss


@dataclass
class Unreadable:
    """A draft file that could not be read, and why."""

    id: str  # the file's name without .json
    path: str  # as the store names it: drafts/<id>.json
    problem: str
    age_days: float  # since the file last changed


def read_drafts(store: Store) -> tuple[list[Draft], list[Unreadable]]:
    """Every draft of the store, and every draft file that could not be read with the reason."""
    drafts: list[Draft] = []
    unreadable: list[Unreadable] = []
    for path in store.files("draft"):
        label = store.label(path)
        try:
            drafts.append(store.read_draft(path.stem))
            continue
        except RecordNotFound:  # removed since the folder was listed
            continue
        except RecordError as exc:  # invalid JSON, fields, or a file name that is no draft id
            problem = str(exc).removeprefix(f"{label}: ")
        except OSError as exc:
            problem = exc.strerror or type(exc).__name__
        try:
            age = round((time.time() - path.stat().st_mtime) / 86400, 2)
        except OSError:
            age = 0.0
        unreadable.append(Unreadable(path.stem, label, problem, age))
    return drafts, unreadable


# The moves a draft awaits from people on its way to publication, as the queue says each: a rejected one
# reopened, the writer's sign-off (`write`), a reviewer's approval. An edit, a request for changes, a
# rejection or a merge leads elsewhere; `promote` is the pipeline's, awaited from no one.
_AWAITED = {
    ReviewAction.REOPEN: "reopening",
    ReviewAction.WRITE: "the writer's sign-off",
    ReviewAction.APPROVE: "a reviewer's approval",
}
_FORWARD = {
    step.from_state: step
    for step in TRANSITIONS
    if step.to_state != step.from_state and step.action in (*_AWAITED, ReviewAction.PROMOTE)
}
assert len(_FORWARD) == sum(
    1 for s in TRANSITIONS if s.to_state != s.from_state and s.action in (*_AWAITED, ReviewAction.PROMOTE)
), "one way forward from each state"


@functools.cache
def awaits(state: DraftState) -> tuple[str, ...]:
    """What a draft in `state` awaits from people before `incidentlib promote` publishes it, in order,
    read off TRANSITIONS: () for an approved, published or merged draft."""
    said: list[str] = []
    while state in _FORWARD:
        step = _FORWARD[state]
        if step.action in _AWAITED:
            said.append(_AWAITED[step.action])
        state = step.to_state
    return tuple(said)


def lacks(draft: Draft, languages: Sequence[str]) -> list[str]:
    """Everything the draft lacks before it can be published: its content's gaps
    (pipeline.review.missing_for_publication), then the sign-offs it awaits (`awaits`). A draft whose
    text is complete but is still `extracted` lacks its writer's sign-off and a reviewer's approval, not
    nothing."""
    return [*missing_for_publication(draft, languages), *awaits(draft.state)]


def entry_for(draft: Draft, languages: Sequence[str], now: datetime | None = None) -> QueueEntry:
    """The draft's line in the queue: what it is, how old, who wrote it and what it still lacks."""
    now = now or utc_now()
    created = draft.created_at or now
    titles = draft.title or {}
    return QueueEntry(
        id=draft.id,
        state=draft.state.value,
        org=draft.org,
        title=titles.get("en") or next(iter(titles.values()), None),
        age_days=round((now - created).total_seconds() / 86400, 2),
        written_by=draft.review.written_by,
        components=list(draft.components),
        missing=lacks(draft, languages),
        fetch_failure=draft.origin.failure.reason if draft.origin.failure else None,
        incidents=len(draft.incidents),
        duplicates=len(draft.possible_duplicates),
    )


def queue(store: Store, languages: Sequence[str], filters: QueueFilter = EVERY_DRAFT) -> list[QueueEntry]:
    """The drafts `filters` lets through, sorted as it asks.

    Unreadable draft files are listed (state `unreadable`, with the `problem`) unless a
    filter leaves them out. All that is known of one is its id and its age: a state filter
    without `unreadable` and `older_than_days` apply as to any draft; an organisation, a
    component, a writer or a search leaves it out (it cannot match), unless the states ask for
    `unreadable`.
    """
    drafts, unreadable = read_drafts(store)
    return queue_of(drafts, unreadable, languages, filters)


def queue_of(
    drafts: Sequence[Draft],
    unreadable: Sequence[Unreadable],
    languages: Sequence[str],
    filters: QueueFilter = EVERY_DRAFT,
    *,
    entry_of: Callable[[Draft, datetime], QueueEntry] | None = None,
    text_of: Callable[[Draft], str] | None = None,
) -> list[QueueEntry]:
    """`queue` over drafts already read. The web page keeps them read between requests, with each
    one's entry (`entry_of(draft, now)`, as `entry` makes it) and its searchable text (`text_of`,
    as `searchable` makes it) worked out once per version of the draft."""
    now = utc_now()  # once: one clock read per draft was a fifth of a 5,000-draft queue's time
    entries = [_unreadable_entry(bad) for bad in unreadable if filters.lets_through_unreadable(bad)]
    for draft in drafts:
        if not filters.lets_through(draft, text_of or searchable):
            continue
        entry = entry_of(draft, now) if entry_of else entry_for(draft, languages, now)
        if filters.old_enough(entry.age_days):
            entries.append(entry)
    return sorted(entries, key=_SORT_KEYS[filters.sort])


def _unreadable_entry(bad: Unreadable) -> QueueEntry:
    return QueueEntry(
        id=bad.id,
        state=UNREADABLE,
        org=None,
        title=None,
        age_days=bad.age_days,
        written_by=None,
        problem=f"{bad.path}: {bad.problem}",
    )


_SORT_KEYS: dict[str, Callable[[QueueEntry], Any]] = {
    "age": lambda e: -e.age_days,
    "state": lambda e: (_STATE_ORDER.index(e.state), -e.age_days),
    "org": lambda e: ((e.org or "").casefold(), -e.age_days),
    "id": lambda e: e.id,
}


def searchable(draft: Draft) -> str:
    """What a search looks in, case-folded: the draft's id, its titles and its text."""
    return " ".join([draft.id, *(draft.title or {}).values(), draft.text or ""]).casefold()


# ---------------------------------------------------------------- one record, as a reviewer reads it

_PREVIEW = 100
_QUOTE = 80


@dataclass
class Block:
    """A titled part of `show`'s output; every line is plain text, printed as it stands."""

    title: str
    lines: list[str] = field(default_factory=list)


def _value(value: Any) -> str:
    if value is None or value == [] or value == {}:
        return "-"
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_value(v)}" for k, v in value.items())
    return str(value)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[:_PREVIEW] + "…"


class _Beside:
    """A draft's evidence, handed out field by field to be printed beside each: the quote and a link to it;
    and its suggestions (passages offered, not written: unsure, or a trigger's others) after it."""

    def __init__(self, record: Case | Draft) -> None:
        self.left: list[Evidence] = list(record.evidence) if isinstance(record, Draft) else []
        self.suggested: list[Evidence] = list(record.suggestions) if isinstance(record, Draft) else []
        # Each suggestion by its place in the draft's list: `incidentlib take-suggestion ID N` takes it.
        self.number = {id(e): i for i, e in enumerate(self.suggested)}
        self.text = record.text if isinstance(record, Draft) else None
        self.url = evidence_url(record) if isinstance(record, Draft) else None

    def take(self, path: str, *, exact: bool = False) -> list[str]:
        """Lines for the evidence of `path` (or of a field within it, or the field it is part of), not yet given."""
        mine = [e for e in self.left if (e.field == path if exact else overlaps(e.field, path))]
        self.left = [e for e in self.left if e not in mine]
        # A vocabulary term's words are many and short: one line per term, no links.
        words: dict[str, list[str]] = {}
        for entry in mine:
            if entry.rule.startswith("vocabulary."):
                words.setdefault(entry.field, []).append(f"\u201c{_shorten(entry.quote)}\u201d")
        lines = [f"    words for {field}: {', '.join(quotes)}" for field, quotes in words.items()]
        lines += [line for e in mine if not e.rule.startswith("vocabulary.") for line in self.lines(e)]
        offered = [e for e in self.suggested if overlaps(e.field, path)]
        self.suggested = [e for e in self.suggested if e not in offered]
        return lines + [line for e in offered for line in self.lines(e, what=f"suggestion {self.number[id(e)]}")]

    def lines(self, entry: Evidence, indent: str = "    ", what: str = "evidence") -> list[str]:
        how = entry.rule if entry.confidence is None else f"{entry.rule}, confidence {entry.confidence:g}"
        if entry.model:  # the finder's: which model, and the features that weighed most
            how += f", finder {entry.model}" + (f", why: {', '.join(entry.reasons)}" if entry.reasons else "")
        line = f"{indent}{what} ({how}): \u201c{_shorten(entry.quote)}\u201d at {entry.start}-{entry.end}"
        if not holds(entry, self.text) or self.text is None or self.url is None:
            return [line + " (no longer in the text: it changed since)"]
        try:
            link = fragment_link(self.url, self.text, entry.start, entry.end)
        except ValueError:
            return [line]
        return [line, f"{indent}  {link}"]


def evidence_url(draft: Draft) -> str:
    """Where the draft's text can be read: its source's capture, else the source itself."""
    source = next((s for s in draft.sources if s.url == draft.origin.url), None) or next(iter(draft.sources), None)
    if source is None:
        return draft.origin.url
    return source.archived or source.url


def _shorten(quote: str) -> str:
    flat = " ".join(quote.split())
    return flat if len(flat) <= _QUOTE else flat[: _QUOTE - 1] + "\u2026"


def show(store: Store, record_id: str, languages: Sequence[str], *, full: bool = False) -> list[Block]:
    """Every field of a draft, or of a published case (an id such as IL-0001), as titled blocks of lines.

    Section texts and a draft's extracted text are cut to a preview unless `full`. Beside each
    field of a draft, its evidence: the quote (shortened), where it stands in the text, and a
    link that opens the source's capture (or the source, before it is archived) at the passage.
    """
    if is_case_id(record_id):
        case = store.read_case(record_id)
        blocks = _blocks(case, case.model_dump(mode="json"), f"{case.id}  published case", None, full)
        if case.merged_into:  # withdrawn into a survivor: where its id resolves
            blocks[0].lines.insert(0, _merged_line(store, case.merged_into))
        return blocks
    draft = store.read_draft(record_id)
    header = f"{draft.id}  {draft.state.value}" + (f"  (case {draft.case_id})" if draft.case_id else "")
    # A draft's file leaves out an empty list of suggestions (and of duplicates, dismissals, a merge's
    # survivor); `show` says there are none.
    data = {"suggestions": [], **draft.model_dump(mode="json")}
    for name, empty in (
        ("possible_duplicates", []),
        ("dismissed", []),
        ("dismissed_passages", []),
        ("merged_into", None),
    ):
        data.setdefault(name, empty)
    blocks = _blocks(draft, data, header, None if draft.merged_into else lacks(draft, languages), full)
    if draft.merged_into:
        blocks[0].lines.insert(0, _merged_line(store, draft.merged_into))
    return blocks


def _merged_line(store: Store, into: str) -> str:
    """`Merged into X`, and the record it resolves to now when X was merged in turn."""
    try:
        final = resolve(store, into)
    except RecordError:
        final = into
    return f"Merged into {into}" + (f" (itself merged since: it resolves to {final})" if final != into else "")


# Fields shown in blocks of their own rather than among the first block's lines: the id (in the header),
# the sources, a draft's origin, text, sections and history, and the assist's (in its block, when there is
# anything in it). A choice of the layout, not a list of the record's fields.
_OWN_BLOCKS = frozenset(
    {"id", "sources", "origin", "text", "sections", "history", "proposals", "assist", "machine_translated"}
)


def _blocks(
    record: Case | Draft, data: dict[str, Any], header: str, lacks: list[str] | None, full: bool
) -> list[Block]:
    top = Block(header, [] if lacks is None else [f"lacks: {', '.join(lacks) if lacks else 'nothing'}"])
    texts: list[Block] = []
    lists: list[Block] = []
    beside = _Beside(record)
    for name, value in data.items():
        if name in _OWN_BLOCKS:
            continue
        if value and name in NARRATIVE:
            texts += _narrative_blocks(name, value, beside)
        elif value and name in ACTION_LISTS:
            lists.append(_actions_block(name, value, beside))
        elif value and name == "docs":  # links, one a line
            lists.append(Block(name, [f"- {url}" for url in value]))
        else:
            top.lines += _field_lines(name, value, beside)
    if beside.left or beside.suggested:  # of fields now empty, or of paths no field line shows
        lists.append(_unplaced_evidence(beside))
    blocks = [top, *texts, *lists, _sources(record, data)]
    if isinstance(record, Draft):
        blocks += _draft_blocks(record, data, full)
    for block in blocks:
        block.lines = block.lines or ["-"]
    return blocks


def _narrative_blocks(name: str, texts: dict[str, str], beside: _Beside) -> list[Block]:
    """A block for each language of a narrative text (`summary.en`), with its evidence."""
    return [
        Block(f"{name}.{lang}", [*(text.splitlines() or [""]), *beside.take(f"{name}.{lang}")])
        for lang, text in texts.items()
    ]


def _actions_block(name: str, actions: list[dict[str, Any]], beside: _Beside) -> Block:
    """The actions numbered, a line per language, each with its evidence after the list's own."""
    lines = beside.take(name, exact=True)
    for i, action in enumerate(actions):
        lines += [f"{i + 1}. {lang}: {text}" for lang, text in action["text"].items()]
        lines += beside.take(f"{name}.{i}")
    return Block(name, lines)


def _field_lines(name: str, value: Any, beside: _Beside) -> list[str]:
    """A field's lines in the first block, each with its evidence; a field of parts part by part."""
    if name in PARTS:
        return [
            line
            for part, v in value.items()
            for line in (f"{name}.{part}: {_value(v)}", *beside.take(f"{name}.{part}"))
        ]
    if name == "extracted":
        return [f"extracted (fields the extractor filled): {_value(sorted(value))}"]
    if name == "evidence":
        return [f"evidence: {len(value)} passages, each beside its field" if value else "evidence: -"]
    if name in ("possible_duplicates", "dismissed", "dismissed_passages"):  # each in its block, below
        return [f"{name}: {len(value)}, below" if value else f"{name}: -"]
    if name == "suggestions":
        return [
            f"suggestions: {len(value)} passages offered, not written, each beside its field "
            "(incidentlib take-suggestion ID N takes one into its field, dismiss-suggestion ID N dismisses it)"
            if value
            else "suggestions: -"
        ]
    return [f"{name}: {_value(value)}", *beside.take(name)]


def _unplaced_evidence(beside: _Beside) -> Block:
    block = Block("evidence of fields not shown above")
    for entry in beside.left:
        block.lines += [f"{entry.field}:", *beside.lines(entry)]
    for entry in beside.suggested:
        block.lines += [f"{entry.field}:", *beside.lines(entry, what=f"suggestion {beside.number[id(entry)]}")]
    return block


def _sources(record: Case | Draft, data: dict[str, Any]) -> Block:
    block = Block("sources")
    for source in data["sources"]:
        line = f"- {source['url']} ({source['kind']}) archived: {_value(source['archived'])}"
        state = source.get("archive")
        if state:
            line += f"; archive: {state['status']}"
            line += "".join(f", {key} {state[key]}" for key in ("reason", "detail") if state[key])
            line += f", {state['attempts']} attempts" if state["attempts"] else ""
            line += f", captured at {state['captured_at']}" if state["captured_at"] else ""
        block.lines.append(line)
    return block


def _assist_block(draft: Draft) -> Block:
    """What the model proposed, waiting to be accepted, its translations a person accepted (and which of them
    went stale), and what each of its prompts last cost."""
    from pipeline.assist.propose import stale_translations

    block = Block("proposals (incidentlib assist ID --accept PATH takes one as your edit)")
    for p in draft.proposals:
        term = f"{p.term}: " if p.term else ""
        block.lines.append(f"- {p.path} ({p.model}, {p.prompt}, {p.made_at:%Y-%m-%d %H:%M}): {term}{p.text}")
        block.lines += [f'    rests on: "{_preview(passage)}"' for passage in p.passages]
    stale = set(stale_translations(draft))
    for path, made in draft.machine_translated.items():
        note = "; STALE: its English has changed since, ask again" if path in stale else ""
        who = f"accepted by {made.accepted_by}{note}"
        block.lines.append(f"machine_translated.{path}: a machine translation ({made.model}), {who}")
    for name, run in draft.assist.items():
        when = f"assist.{name}: last {run.prompt} ({run.asked_at:%Y-%m-%d %H:%M})"
        if run.failure:
            block.lines.append(f"{when}: {run.failure.reason}: {run.failure.message}")
        else:
            cost = f"{run.prompt_tokens}+{run.completion_tokens} tokens"
            block.lines.append(f"{when}: {run.proposed} kept, {len(run.dropped)} dropped, {cost}")
        block.lines += [f"    dropped {d.path}: {d.why}" for d in run.dropped]
    return block


def _duplicates_block(draft: Draft) -> Block:
    """The drafts and cases that may tell the same incident: each with its score, why, and the passage
    the two share; and what a reviewer does with one."""
    block = Block(
        f"Possible duplicates ({len(draft.possible_duplicates)}: incidentlib merge {draft.id} --into ID, "
        f"or incidentlib dismiss {draft.id} ID --as duplicate)"
    )
    for match in draft.possible_duplicates:
        why = f": {'; '.join(match.reasons)}" if match.reasons else ""
        block.lines.append(f"- {match.id}  score {match.score:.2f}{why}")
        if match.passage:
            block.lines.append(f"    shared passage: \u201c{_shorten(match.passage)}\u201d")
    return block


def _draft_blocks(draft: Draft, data: dict[str, Any], full: bool) -> list[Block]:
    origin = Block("origin", [f"{key}: {_value(value)}" for key, value in data["origin"].items() if key != "failure"])
    failure = draft.origin.failure
    origin.lines.append(f"failure: {failure.reason}: {failure.message}" if failure else "failure: -")
    size = len(draft.text or "")
    if full and draft.text:
        text = Block(f"text ({size} characters)", draft.text.splitlines())
    else:
        text = Block("text", [f"{size} characters" + ("; --full prints it" if size else "")])
    sections = Block("sections (heading -> field it fills)")
    for section in draft.sections:
        heading = f"- {section.heading or '(opening)'} -> {section.field.value if section.field else '-'}"
        if full:
            sections.lines += [f"{heading}:", *(f"    {line}" for line in section.text.splitlines())]
        else:
            sections.lines.append(f"{heading}: {_preview(section.text)}")
    blocks = [origin, text, sections]
    if draft.proposals or draft.assist or draft.machine_translated:
        blocks.append(_assist_block(draft))
    if draft.incidents:
        starts = [f"- at {i.start}: {i.heading}" + (f" -> {i.draft_id}" if i.draft_id else "") for i in draft.incidents]
        drafted = all(i.draft_id for i in draft.incidents)
        how = "each drafted on its own; review those" if drafted else "split the draft"
        blocks.append(Block(f"incidents ({len(draft.incidents)} in one document; {how})", starts))
    if draft.possible_duplicates:
        blocks.append(_duplicates_block(draft))
    if draft.dismissed:
        blocks.append(
            Block(
                "dismissed suggestions (never suggested again)",
                [
                    f"- {d.kind} {d.id}: by {d.by} at {d.at:%Y-%m-%d %H:%M}" + (f": {d.comment}" if d.comment else "")
                    for d in draft.dismissed
                ],
            )
        )
    if draft.dismissed_passages:
        blocks.append(
            Block(
                "dismissed passages (wrong for their field: not offered again, and learn counts them wrong)",
                [f"- {e.field} ({e.rule}): \u201c{_shorten(e.quote)}\u201d" for e in draft.dismissed_passages],
            )
        )
    history = Block("history")
    for entry in draft.history:
        was = entry.from_state.value if entry.from_state else "-"
        line = f"- {entry.at:%Y-%m-%d %H:%M} {entry.by}: {was} -> {entry.to_state.value}"
        line += f": {entry.comment}" if entry.comment else ""
        line += f" (changed {', '.join(entry.changed)})" if entry.changed else ""
        history.lines.append(line)
    return [*blocks, history]
