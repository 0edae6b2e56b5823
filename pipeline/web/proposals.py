"""The writer assist on the draft page, pure: what each field may ask the model, the proposals waiting
beside it, its accepted machine translations, and what the last requests came to.

    view = assist_view(draft, model, query)     # None-free: only built when the assist is configured
    ask = parse_ask("summary:ko")               # what a button asks for: fields, languages, again

Only built when the settings name a model (`Settings.assist_configured`): without one the page shows
nothing of the assist. A proposal's passages are marked in the text pane like the evidence passages and
numbered after them (`number_passages`), inside an evidence mark when they lie in one (they often do: a
proposal for the summary quotes the paragraphs the drafter took), so a reviewer checks them in place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast, get_args

from pipeline import review
from pipeline.assist.answers import ENGLISH_FIELDS
from pipeline.assist.propose import (
    check_fields,
    empty,
    english_texts,
    lacking,
    locate,
    sha,
    stale_translations,
    untranslated,
)
from pipeline.assist.run import Outcome
from pipeline.errors import ReviewError
from pipeline.fieldpath import FieldPath
from pipeline.fields import PARTS, TRANSLATED
from pipeline.models import AssistRun, Draft, DraftState, MachineTranslation, Proposal
from pipeline.vocabulary import vocabulary
from pipeline.web.marks import PROPOSED_TITLE, Passage

__all__ = [
    "Ask",
    "AssistView",
    "FieldAssist",
    "MachineNote",
    "Said",
    "ShownProposal",
    "assist_view",
    "form_path",
    "parse_ask",
]

LANGUAGES = ("en", "ko")
OUTCOMES: tuple[str, ...] = get_args(Outcome)
_PATH = re.compile(r"^[a-z_]+(\.[a-z0-9_]+){0,4}$")


def form_path(path: str) -> str:
    """The form field a record path belongs to: summary.ko -> summary, remediation.0.text.ko ->
    remediation, impact.scope -> impact.scope (the form edits impact's parts one by one)."""
    at = FieldPath.parse(path)
    return str(FieldPath(at.parts[:2])) if at.root in PARTS else at.root


def parse_ask(value: str) -> tuple[list[str] | None, list[str], bool]:
    """What a button asks: `FIELD:en` (propose the field's English), `FIELD:ko` (translate its English),
    `all` (everything the draft lacks), each with `:again` to ask even about a text asked about before.
    (fields or None for all, languages, again); a ReviewError saying what it takes otherwise."""
    parts = value.strip().split(":")
    again = len(parts) > 1 and parts[-1] == "again"
    if again:
        parts = parts[:-1]
    if parts == ["all"]:
        return None, list(LANGUAGES), again
    if len(parts) != 2 or parts[1] not in LANGUAGES:
        raise ReviewError(f"{value[:60]!r}: ask for FIELD:en, FIELD:ko or all")
    name, language = parts
    try:
        check_fields([name])
    except ValueError as exc:
        raise ReviewError(str(exc)) from None
    if language == "en" and name not in ENGLISH_FIELDS:
        raise ReviewError(f"the model proposes the English of {', '.join(ENGLISH_FIELDS)}; not of {name}")
    if language == "ko" and name not in TRANSLATED:
        raise ReviewError(f"the model translates {', '.join(TRANSLATED)}; not {name}")
    return [name], [language], again


@dataclass
class Ask:
    """One "Ask the model" button: the value it sends (`summary:en`) and its label."""

    value: str
    label: str


@dataclass
class ShownProposal:
    proposal: Proposal
    # The passages it rests on: (their mark in the text pane, or None when no longer found there, the passage).
    passages: list[tuple[int | None, str]] = field(default_factory=list)
    term_label: str | None = None
    outdated: bool = False  # made of a text (or English) the draft no longer holds: accepting is refused
    replaces: bool = False  # the field holds a value now: accepting replaces it


@dataclass
class MachineNote:
    path: str
    made: MachineTranslation
    stale: bool


@dataclass
class FieldAssist:
    asks: list[Ask] = field(default_factory=list)
    proposals: list[ShownProposal] = field(default_factory=list)
    machine: list[MachineNote] = field(default_factory=list)


@dataclass
class Said:
    """What the last request from this page came to, as the redirect after it names it (`?asked=...`)."""

    outcome: Outcome
    ask: str  # the button's value, `all` for the whole draft
    field: str | None  # the form field it was for, None for all
    proposed: int = 0
    dropped: int = 0


@dataclass
class AssistView:
    model: str
    askable: bool  # not published, not rejected, and with a text to ask about
    fields: dict[str, FieldAssist] = field(default_factory=dict)  # by form field path
    everything: bool = False  # something to ask for the whole draft
    runs: list[tuple[str, AssistRun]] = field(default_factory=list)  # by prompt name
    said: Said | None = None
    accepted: str | None = None  # the path of the proposal just accepted
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)  # each passage's mark: where it is in the text
    _found: list[tuple[ShownProposal, int, int, int]] = field(default_factory=list)  # (proposal, passage, start, end)

    def number_passages(self, first: int) -> list[Passage]:
        """Number the proposals' passages from `first` on, in the text's order, for the text pane
        (pipeline.web.marks.text_pane marks them beside the evidence): each passage its own number."""
        out: list[Passage] = []
        for shown, index, start, end in sorted(self._found, key=lambda f: (f[2], -f[3])):
            n = first + len(out)
            out.append(Passage(n, start, end, PROPOSED_TITLE, proposed=True))
            self.spans[n] = (start, end)
            shown.passages[index] = (n, shown.passages[index][1])
        return out

    @property
    def accepted_field(self) -> str | None:
        return form_path(self.accepted) if self.accepted else None

    @property
    def failures(self) -> list[tuple[str, AssistRun]]:
        return [(name, run) for name, run in self.runs if run.failure is not None]


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() and len(value) < 6 else 0


def _asked(query: Mapping[str, str]) -> Said | None:
    """What the page was sent back with after an ask (`?asked=proposed&ask=summary&n=2`), or None."""
    outcome = query.get("asked")
    if outcome not in OUTCOMES:
        return None
    value = query.get("ask") or "all"
    try:
        fields, _, _ = parse_ask(value)
    except ReviewError:
        return None
    where = form_path(ENGLISH_FIELDS.get(fields[0], fields[0])) if fields else None
    return Said(cast(Outcome, outcome), value, where, _int(query.get("n")), _int(query.get("dropped")))


def assist_view(draft: Draft, model: str, query: Mapping[str, str] | None = None) -> AssistView:
    """What the draft page shows of the assist for `draft`, with the model the settings name."""
    query = query or {}
    text = draft.text or ""
    view = AssistView(
        model=model,
        askable=draft.state not in (DraftState.PUBLISHED, DraftState.REJECTED, DraftState.MERGED) and bool(text),
    )
    view.said = _asked(query)
    accepted = query.get("accepted") or ""
    view.accepted = accepted if _PATH.match(accepted) and len(accepted) <= 60 else None
    view.runs = sorted(draft.assist.items())

    def field_view(path: str) -> FieldAssist:
        return view.fields.setdefault(form_path(path), FieldAssist())

    english = english_texts(draft)
    waiting = set()
    for proposal in draft.proposals:
        shown = ShownProposal(proposal, replaces=not empty(review.value_at(draft, proposal.path)))
        if proposal.translated_from is not None:
            shown.outdated = english.get(proposal.path.rsplit(".", 1)[0]) != proposal.translated_from
        else:
            shown.outdated = not text or sha(text) != proposal.text_sha
        if proposal.term:
            term = vocabulary().terms["root_causes"].get(proposal.term)
            shown.term_label = term.label if term else None
        for index, passage in enumerate(proposal.passages):
            shown.passages.append((None, passage))
            span = locate(text, passage) if not shown.outdated else None
            if span:
                view._found.append((shown, index, *span))
        field_view(proposal.path).proposals.append(shown)
        if not shown.outdated:
            waiting.add(proposal.path)
    stale = set(stale_translations(draft))
    for path, made in draft.machine_translated.items():
        field_view(path).machine.append(MachineNote(path, made, path in stale))
    if view.askable:
        for name in lacking(draft):
            if ENGLISH_FIELDS[name] not in waiting:
                field_view(ENGLISH_FIELDS[name]).asks.append(Ask(f"{name}:en", "Ask the model"))
        for name in TRANSLATED:
            if set(untranslated(draft, "ko", [name])) - waiting:
                field_view(name).asks.append(Ask(f"{name}:ko", "Ask the model for Korean"))
        view.everything = any(f.asks for f in view.fields.values())
    return view
