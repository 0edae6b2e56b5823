"""Evidence, pure: the passage of a draft's text each drafted field came from.

    entry = evidence_for("trigger", draft.text, "cue.trigger", Span("after deploying 2.3"))
    entry = evidence_for("action_items.2", draft.text, "list-item", Span(start=410, end=466))
    draft = without_evidence(draft, ["remediation.0.text.en"])   # what a person's edit does

A field path (`pipeline.fieldpath.FieldPath`) names a case field (`trigger`), a part of one
(`summary.en`, `timeline.detected_after`) or an item of a list (`action_items.2`), as the review
history does (`action_items.2.text.en`). A draft written when the drafter spelt items in brackets
(`action_items[2]`) reads the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pipeline.fieldpath import FieldPath
from pipeline.models import Draft, Evidence

__all__ = ["Span", "evidence_for", "field_parts", "holds", "overlaps", "without_evidence"]


@dataclass(frozen=True)
class Span:
    """A passage of a text as a caller gives it: its quote, its offsets, or both (`evidence_for`)."""

    quote: str | None = None
    start: int | None = None
    end: int | None = None


def evidence_for(field: str, text: str, rule: str, span: Span, *, confidence: float | None = None) -> Evidence:
    """The evidence that `field` came from a passage of `text`, chosen by `rule`.

    Give the span's quote, its offsets, or both. A quote alone is looked up in the text (its first
    occurrence; give `start` too for a later one); offsets alone take the quote from the text;
    both must agree. `confidence`: how sure the rule is (0 to 1), when it says. Raises ValueError
    when the passage is not in the text as given.
    """
    quote, start, end = span.quote, span.start, span.end
    if quote is None:
        if start is None or end is None:
            raise ValueError("give the quote, or both its start and end")
        if not 0 <= start < end <= len(text):
            raise ValueError(f"offsets {start}-{end} are not a passage of a text of {len(text)} characters")
        quote = text[start:end]
    elif start is None:
        start = text.find(quote)
        if start < 0:
            raise ValueError(f"the quote is not in the text: {quote[:60]!r}")
    if end is None:
        end = start + len(quote)
    if not 0 <= start < end <= len(text) or text[start:end] != quote:
        raise ValueError(f"the text at {start}-{end} is {text[start:end][:60]!r}, not the quote {quote[:60]!r}")
    if not quote.strip():
        raise ValueError("the quote is only white space")
    return Evidence(field=field, quote=quote, start=start, end=end, rule=rule, confidence=confidence)


def holds(entry: Evidence, text: str | None) -> bool:
    """The quote still stands at its offsets in `text` (a re-crawl may have changed the text)."""
    return text is not None and text[entry.start : entry.end] == entry.quote


def field_parts(path: str) -> tuple[str | int, ...]:
    """A field path as its parts (`FieldPath.parse`): `action_items.2` is ('action_items', 2)."""
    return FieldPath.parse(path).parts


def overlaps(a: str, b: str) -> bool:
    """One path is the other or lies within it, either way: `summary` and `summary.en`; `action_items.2`
    and `action_items`."""
    x, y = FieldPath.parse(a), FieldPath.parse(b)
    return x.within(y) or y.within(x)


def without_evidence(draft: Draft, changed: Iterable[str]) -> Draft:
    """The draft without the evidence of any field a person changed (paths as `Transition.changed` names them).

    An edited field is the person's, not a passage's: its machine evidence would vouch for
    text nobody drafted from it. A list that changed length is named whole, so every item's
    evidence goes (the items' places moved). Evidence of fields left alone is kept.
    """
    changed = list(changed)
    kept = [e for e in draft.evidence if not any(overlaps(e.field, path) for path in changed)]
    if len(kept) == len(draft.evidence):
        return draft
    return draft.model_copy(update={"evidence": kept})
