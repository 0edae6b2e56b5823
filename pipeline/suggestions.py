"""Taking a suggestion into its field, pure: the one rule the draft page and the command line share.

    draft = take_suggestion(draft, 0, by="dana")     # suggestion 0's passage written into its field
    takeable(draft.suggestions[0])                   # False for a field that holds no passage (root_cause)

A suggestion (`Draft.suggestions`) is a passage a rule found for a field but trusted too little to
write into it. A writer who reads it and agrees takes it: the passage is written into the field (a
text is filled, or gets it as a paragraph of its own after what it holds; a list of steps gets it
as an item), as that person's edit (`pipeline.review.edited`: the history says who took which
passage, and the field is theirs, so a re-crawl leaves it alone); the suggestion becomes the
field's evidence, so the passage stays marked in the text.
"""

from __future__ import annotations

from typing import Any

from pipeline import review
from pipeline.errors import ReviewError
from pipeline.evidence import holds
from pipeline.fieldpath import FieldPath
from pipeline.fields import ACTION_LISTS, NARRATIVE, PASSAGE_PARTS
from pipeline.models import Draft, Evidence

__all__ = ["dismiss_suggestion", "take_suggestion", "takeable", "taken_path", "undismissed"]

_UNKNOWN = "unknown"


def takeable(entry: Evidence) -> bool:
    """The suggestion's field holds a passage: a text, an impact's scope, or a list of steps. A root
    cause holds a class of the vocabulary, chosen by a person, not a passage."""
    name = FieldPath.parse(entry.field).root
    return name in NARRATIVE or name in ACTION_LISTS or name in PASSAGE_PARTS


def taken_path(draft: Draft, entry: Evidence) -> str:
    """The field path the passage is written at: `trigger`, `impact.scope`, `remediation.2` (a new item)."""
    name = FieldPath.parse(entry.field).root
    if name in ACTION_LISTS:
        return str(FieldPath((name, len(getattr(draft, name)))))
    if name in PASSAGE_PARTS:
        return f"{name}.{PASSAGE_PARTS[name]}"
    return name


def _paragraphs(held: str | None, passage: str) -> str:
    """`held` with the passage after it as a paragraph of its own; the passage alone for an empty field."""
    held = (held or "").strip()
    return f"{held}\n\n{passage}" if held and held != _UNKNOWN else passage


def _value(draft: Draft, name: str, passage: str) -> tuple[str, Any]:
    """The dotted path `review.set_field` sets and the value it sets there."""
    if name in ACTION_LISTS:
        items = [item.model_dump(mode="json") for item in getattr(draft, name)]
        return name, [*items, {"text": {"en": passage}}]
    if name in PASSAGE_PARTS:
        part = PASSAGE_PARTS[name]
        return f"{name}.{part}", _paragraphs(getattr(getattr(draft, name), part), passage)
    return f"{name}.en", _paragraphs((getattr(draft, name) or {}).get("en"), passage)


def _suggestion(draft: Draft, index: int) -> Evidence:
    """Suggestion `index` of the draft; ReviewError (one line) when there is none."""
    if not 0 <= index < len(draft.suggestions):
        count = len(draft.suggestions)
        has = f"{count} (0 to {count - 1})" if count else "none"
        raise ReviewError(f"no suggestion {index}: the draft has {has}", draft_id=draft.id)
    return draft.suggestions[index]


def take_suggestion(draft: Draft, index: int, by: str) -> Draft:
    """The draft with suggestion `index` (its place in `draft.suggestions`, as `show` numbers it)
    taken into its field as `by`'s edit, and kept as that field's evidence.

    Refused (ReviewError, one line naming the suggestion) when there is no such suggestion, when its
    passage no longer stands in the text (a re-crawl changed it), when its field holds no passage (a
    root cause's class), or when the field holds the passage already. The field's other evidence is
    kept: the edit only adds a paragraph or an item, so the passages it held are still its own.
    """
    entry = _suggestion(draft, index)
    said = f"suggestion {index} ({entry.field})"
    if not takeable(entry):
        raise ReviewError(
            f"{said}: {entry.field} holds a class of the vocabulary, not a passage; choose it by hand",
            draft_id=draft.id,
        )
    if not holds(entry, draft.text):
        raise ReviewError(f"{said}: its passage is no longer in the text (it changed since)", draft_id=draft.id)
    name = FieldPath.parse(entry.field).root
    passage = " ".join(entry.quote.split())
    path, value = _value(draft, name, passage)
    held = review.value_at(draft, path)
    texts = [" ".join(str((i.get("text") or {}).get("en", "")).split()) for i in held] if isinstance(held, list) else []
    if (isinstance(held, str) and passage in " ".join(held.split())) or passage in texts:
        raise ReviewError(f"{said}: {path} holds this passage already", draft_id=draft.id)
    at = taken_path(draft, entry)
    note = f"took the suggestion of {entry.rule} (confidence {entry.confidence or 0:g}) into {at}"
    after = review.edited(draft, review.set_field(draft, path, value), by, comment=note)
    taken = entry.model_copy(update={"field": at})
    suggestions = [s for i, s in enumerate(draft.suggestions) if i != index]
    return after.model_copy(update={"evidence": [*draft.evidence, taken], "suggestions": suggestions})


def dismiss_suggestion(draft: Draft, index: int, by: str, comment: str | None = None) -> Draft:
    """The draft with suggestion `index` dismissed: it leaves the suggestions, is kept in
    `dismissed_passages` (a re-crawl does not offer it again; `incidentlib learn` counts it wrong for
    its field) and the history says who dismissed which passage. A note, like a duplicate's dismissal:
    the state and the approval stay as they were."""
    entry = _suggestion(draft, index)
    said = (
        f"dismissed suggestion {index} ({entry.field}, {entry.rule}): \u201c{' '.join(entry.quote.split())[:80]}\u201d"
    )
    suggestions = [s for i, s in enumerate(draft.suggestions) if i != index]
    return review.note(
        draft,
        by,
        said,
        comment,
        "dismiss",
        suggestions=suggestions,
        dismissed_passages=[*draft.dismissed_passages, entry],
    )


def undismissed(suggestions: list[Evidence], dismissed: list[Evidence]) -> list[Evidence]:
    """The suggestions a writer has not dismissed already (the same field and passage)."""
    said_no = {(FieldPath.parse(d.field).root, " ".join(d.quote.split())) for d in dismissed}
    return [s for s in suggestions if (FieldPath.parse(s.field).root, " ".join(s.quote.split())) not in said_no]
