"""Taking a suggestion into its field (pipeline.suggestions): the rule the page and the command line share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_drafting import GATED, URL, draft_of

from pipeline.draft import apply_extraction
from pipeline.errors import ReviewError
from pipeline.evidence import Span, evidence_for
from pipeline.extract import extract
from pipeline.models import Draft, SourceEntry
from pipeline.store import Store
from pipeline.suggestions import take_suggestion, takeable


def _index(draft: Draft, field: str) -> int:
    return next(i for i, s in enumerate(draft.suggestions) if s.field == field)


def test_a_taken_suggestion_fills_an_empty_text_as_the_persons_edit_and_stays_marked() -> None:
    draft = draft_of(GATED)
    assert draft.detection is None
    offered = draft.suggestions[_index(draft, "detection")]
    taken = take_suggestion(draft, _index(draft, "detection"), "dana")
    assert taken.detection == {"en": offered.quote}
    assert "detection" not in {s.field for s in taken.suggestions}
    assert offered.model_copy(update={"field": "detection"}) in taken.evidence
    last = taken.history[-1]
    assert (last.by, last.changed) == ("dana", ["detection"])
    assert last.comment == "edited: took the suggestion of cue.detection+modal (confidence 0.35) into detection"
    assert last.edits[0].before is None and last.edits[0].after == {"en": offered.quote}


def test_a_text_that_holds_something_gets_the_passage_as_a_paragraph_and_keeps_its_evidence() -> None:
    draft = draft_of(GATED)
    trigger = [e for e in draft.evidence if e.field == "trigger"]
    quote = "A synthetic probe would have detected the broken route within a minute."
    moved = evidence_for("trigger", draft.text or "", "cue.trigger+modal", Span(quote), confidence=0.4)
    taken = take_suggestion(draft.model_copy(update={"suggestions": [moved]}), 0, "dana")
    assert draft.trigger is not None
    assert taken.trigger == {"en": f"{draft.trigger['en']}\n\n{quote}"}
    assert [e for e in taken.evidence if e.field == "trigger"] == [*trigger, moved]
    assert not taken.suggestions


def test_a_step_is_added_as_an_item_of_the_list() -> None:
    draft = draft_of(GATED)
    taken = take_suggestion(draft, _index(draft, "remediation"), "dana")
    assert [a.text["en"] for a in taken.remediation] == [
        "We reverted the proxy change.",
        "Requests to the dashboard failed with errors.",
    ]
    assert {e.field: e.rule for e in taken.evidence}["remediation.1"] == "heading.remediation+failure"
    assert taken.history[-1].changed == ["remediation"]


def test_a_recrawl_leaves_the_taken_field_alone_and_its_passage_marked() -> None:
    draft = take_suggestion(draft_of(GATED), 0, "dana")
    entry = SourceEntry(url=URL)
    again = apply_extraction(draft, entry, extract(GATED, URL, None), draft.origin)
    assert again.detection == draft.detection, "the field is the person's: its hash no longer matches"
    assert "detection" in {e.field for e in again.evidence}
    assert "detection" not in {s.field for s in again.suggestions}
    changed = GATED.replace(b"A synthetic probe", b"A probe")
    moved = apply_extraction(draft, entry, extract(changed, URL, None), draft.origin)
    assert moved.detection == draft.detection
    assert "detection" not in {e.field for e in moved.evidence}, "a passage no longer in the text keeps no mark"


def test_what_cannot_be_taken_is_refused_in_one_line() -> None:
    draft = draft_of(GATED)
    with pytest.raises(ReviewError, match="no suggestion 5: the draft has 2 \\(0 to 1\\)"):
        take_suggestion(draft, 5, "dana")
    cause = evidence_for("root_cause", draft.text or "", "cue.root_cause+modal", Span("a change"), confidence=0.3)
    assert not takeable(cause)
    with pytest.raises(ReviewError, match="root_cause holds a class of the vocabulary"):
        take_suggestion(draft.model_copy(update={"suggestions": [cause]}), 0, "dana")
    stale = draft.model_copy(update={"text": (draft.text or "").replace("synthetic", "a")})
    with pytest.raises(ReviewError, match="no longer in the text"):
        take_suggestion(stale, _index(draft, "detection"), "dana")
    twice = take_suggestion(draft, 0, "dana")
    again = twice.model_copy(update={"suggestions": [draft.suggestions[0]]})
    with pytest.raises(ReviewError, match=r"detection\.en holds this passage already"):
        take_suggestion(again, 0, "dana")


def test_the_command_takes_the_suggestion_show_numbers(cli: Callable, store: Store, root: Path) -> None:
    draft = draft_of(GATED)
    store.write_draft(draft)
    number = _index(draft, "remediation")
    shown = cli("show", draft.id, "--root", str(root)).stdout
    assert f"suggestion {number} (heading.remediation+failure, confidence 0.5)" in shown
    done = cli("take-suggestion", draft.id, str(number), "--by", "dana", "--root", str(root))
    assert done.exit_code == 0, done.stderr
    assert done.stdout == (
        f"{draft.id}: took suggestion {number} into remediation.1: "
        "\u201cRequests to the dashboard failed with errors.\u201d, now extracted\n"
    )
    stored = store.read_draft(draft.id)
    assert [a.text["en"] for a in stored.remediation][-1] == "Requests to the dashboard failed with errors."
    assert stored.history[-1].by == "dana" and len(stored.suggestions) == 1
    refused = cli("take-suggestion", draft.id, "3", "--by", "dana", "--root", str(root))
    assert refused.exit_code == 1 and "no suggestion 3: the draft has 1 (0 to 0)" in refused.stderr
