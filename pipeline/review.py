"""The review of drafts, pure: states, the rules between them, and what a draft still lacks.

    extracted ──write──▶ written ──approve──▶ approved ──promote──▶ published
        ▲                  │ ▲                   │
        │      request-changes│ └─write── changes_requested
        │                  ▼                     │ (an edit after approval: back to in_review)
        └──reopen── rejected ◀──reject── (any state but published)

Rules: a writer signs `write` (review.written_by); only a different person may approve,
request changes or reject (four eyes); `reviewed_by` and `reviewed_at` are set by an
approval and by nothing else; every transition is appended to the draft's history (who,
when, from, to, comment) and never rewritten, so no decision is lost, rejections
included. Each function takes a draft and returns the new one, or raises ReviewError
saying why not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from pipeline.errors import ReviewError
from pipeline.models import ArchiveState, ArchiveStatus, Case, Draft, DraftState, Review, Transition, utc_now

__all__ = [
    "REQUIRED_NARRATIVE",
    "approve",
    "edited",
    "missing_for_publication",
    "missing_languages",
    "reject",
    "reopen",
    "request_changes",
    "write",
]

# Narrative fields every published case has, in every required language.
REQUIRED_NARRATIVE = ("title", "summary")
OPTIONAL_NARRATIVE = ("symptoms_text", "trigger", "detection", "lessons")
_REVIEWABLE = (DraftState.WRITTEN, DraftState.IN_REVIEW)


def missing_languages(record: Case | Draft, languages: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each narrative text present (fields, then remediation and action items) with the required
    languages it lacks; texts that lack none are left out. Empty fields are not checked here."""
    texts = [(name, getattr(record, name)) for name in (*REQUIRED_NARRATIVE, *OPTIONAL_NARRATIVE)]
    for list_name in ("remediation", "action_items"):
        texts += [(f"{list_name}.{i}.text", action.text) for i, action in enumerate(getattr(record, list_name))]
    gaps = [(name, [lang for lang in languages if lang not in text]) for name, text in texts if text]
    return [(name, langs) for name, langs in gaps if langs]


def missing_for_publication(draft: Draft, languages: Sequence[str]) -> list[str]:
    """Everything the draft lacks before it can be published, one short phrase each."""
    gaps = dict(missing_languages(draft, languages))
    missing: list[str] = []
    for name in (*REQUIRED_NARRATIVE, *OPTIONAL_NARRATIVE):
        if name in REQUIRED_NARRATIVE and not getattr(draft, name):
            missing.append(name)
        missing += [f"{name}.{lang}" for lang in gaps.pop(name, [])]
    missing += [f"{path}.{lang}" for path, langs in gaps.items() for lang in langs]
    for name in ("org", "org_slug", "date", "date_kind"):
        if not getattr(draft, name):
            missing.append(name)
    if not draft.sources:
        missing.append("sources")
    for index, source in enumerate(draft.sources):
        if not source.archived or source.archive.status != ArchiveStatus.CAPTURED:
            why = source.archive.reason or source.archive.status
            missing.append(f"sources.{index}.archived ({why})")
    return missing


def _step(draft: Draft, to: DraftState, by: str, comment: str | None, **changes: Any) -> Draft:
    entry = Transition(at=utc_now(), by=by, from_state=draft.state, to_state=to, comment=comment)
    return draft.model_copy(update={"state": to, "history": [*draft.history, entry], **changes})


def _require(draft: Draft, allowed: Sequence[DraftState], action: str) -> None:
    if draft.state not in allowed:
        states = ", ".join(s.value for s in allowed)
        raise ReviewError(
            f"cannot {action} a draft that is {draft.state.value} (only when {states})", draft_id=draft.id
        )


def _writers(draft: Draft) -> set[str]:
    """Everyone who signed the draft as written or edited its content, now or earlier."""
    names = {h.by.casefold() for h in draft.history if h.to_state in (DraftState.WRITTEN, DraftState.IN_REVIEW)}
    if draft.review.written_by:
        names.add(draft.review.written_by.casefold())
    return names


def _four_eyes(draft: Draft, by: str, action: str) -> None:
    if by.casefold() in _writers(draft):
        raise ReviewError(
            f"{by} wrote or edited this draft and cannot {action} it; another reviewer must", draft_id=draft.id
        )


def write(draft: Draft, by: str, languages: Sequence[str], comment: str | None = None) -> Draft:
    """The writer has filled the narrative fields: sign the draft and hand it to review."""
    _require(draft, (DraftState.EXTRACTED, DraftState.CHANGES_REQUESTED, DraftState.WRITTEN), "mark as written")
    narrative = [m for m in missing_for_publication(draft, languages) if m.split(".")[0] in REQUIRED_NARRATIVE]
    if narrative:
        raise ReviewError(f"not written yet, still missing {', '.join(narrative)}", draft_id=draft.id)
    review = Review(written_by=by, reviewed_by=None, reviewed_at=None)
    return _step(draft, DraftState.WRITTEN, by, comment, review=review)


def approve(draft: Draft, by: str, languages: Sequence[str], comment: str | None = None) -> Draft:
    """A reviewer who is not the writer approves a complete draft."""
    _require(draft, _REVIEWABLE, "approve")
    _four_eyes(draft, by, "approve")
    missing = missing_for_publication(draft, languages)
    if missing:
        raise ReviewError(f"incomplete, cannot approve; missing {', '.join(missing)}", draft_id=draft.id)
    now = utc_now()
    review = draft.review.model_copy(update={"reviewed_by": by, "reviewed_at": now})
    return _step(draft, DraftState.APPROVED, by, comment, review=review)


def request_changes(draft: Draft, by: str, comment: str) -> Draft:
    """Back to the writer with the reviewer's comments."""
    _require(draft, (*_REVIEWABLE, DraftState.APPROVED), "request changes on")
    _four_eyes(draft, by, "review")
    if not comment or not comment.strip():
        raise ReviewError("say what should change (--comment)", draft_id=draft.id)
    review = draft.review.model_copy(update={"reviewed_by": None, "reviewed_at": None})
    return _step(draft, DraftState.CHANGES_REQUESTED, by, comment.strip(), review=review)


def reject(draft: Draft, by: str, reason: str) -> Draft:
    """Rejected, with a reason: the draft is kept, and its source is not drafted again."""
    _require(
        draft,
        (
            DraftState.EXTRACTED,
            DraftState.WRITTEN,
            DraftState.IN_REVIEW,
            DraftState.CHANGES_REQUESTED,
            DraftState.APPROVED,
        ),
        "reject",
    )
    _four_eyes(draft, by, "reject")
    if not reason or not reason.strip():
        raise ReviewError("say why it is rejected (--reason)", draft_id=draft.id)
    review = draft.review.model_copy(update={"reviewed_by": None, "reviewed_at": None})
    return _step(draft, DraftState.REJECTED, by, reason.strip(), review=review)


def reopen(draft: Draft, by: str, comment: str | None = None) -> Draft:
    """A rejected draft goes back to the start; its source is crawled again."""
    _require(draft, (DraftState.REJECTED,), "reopen")
    return _step(draft, DraftState.EXTRACTED, by, comment, review=Review(written_by=draft.review.written_by))


# Kept by the pipeline and the review commands; an edit may not touch them.
PIPELINE_FIELDS = ("id", "state", "history", "review", "case_id", "extracted", "origin", "created_at")


def edited(before: Draft, after: Draft, by: str) -> Draft:
    """A person's edit: after an approval (or a publication) it sends the draft back to review.

    The review's own fields (state, review, history, case id, archive states) are refused:
    an edit cannot approve a draft, take another case's id or fake a capture.
    """
    for name in PIPELINE_FIELDS:
        if getattr(before, name) != getattr(after, name):
            raise ReviewError(
                f"{name} is kept by the pipeline and the review commands, not edited by hand", draft_id=before.id
            )
    if _archive_states(before) != _archive_states(after):
        raise ReviewError(
            "sources' archive states and links are kept by the archive run, not edited by hand", draft_id=before.id
        )
    content_changed = _content(before) != _content(after)
    if not content_changed:
        return after
    if before.state in _REVIEWABLE:
        # Kept in the history, so whoever edits a draft under review cannot also approve it.
        return _step(after, before.state, by, "edited")
    if before.state not in (DraftState.APPROVED, DraftState.PUBLISHED):
        return after
    review = after.review.model_copy(update={"reviewed_by": None, "reviewed_at": None})
    moved = _step(after.model_copy(update={"state": before.state}), DraftState.IN_REVIEW, by, "edited after approval")
    return moved.model_copy(update={"review": review})


def _archive_states(draft: Draft) -> list[tuple[str, str | None, ArchiveState]]:
    return [(s.url, s.archived, s.archive) for s in draft.sources]


def _content(draft: Draft) -> dict[str, Any]:
    """What a reviewer approves: the case fields, not the review's own bookkeeping."""
    return draft.model_dump(mode="json", exclude={"state", "history", "review", "updated_at", "extracted"})


def set_field(draft: Draft, path: str, value: Any) -> Draft:
    """The draft with one field (a dotted path: `summary.ko`, `impact.scope`) set to `value`."""
    data = draft.model_dump(mode="json")
    parts = path.split(".")
    if parts[0] in PIPELINE_FIELDS:
        raise ReviewError(
            f"{parts[0]} is kept by the pipeline and the review commands, not set by hand", draft_id=draft.id
        )
    node: Any = data
    for index, part in enumerate(parts[:-1]):
        key: Any = int(part) if isinstance(node, list) and part.isdigit() else part
        try:
            child = node[key]
        except (KeyError, IndexError, TypeError):
            raise ReviewError(f"no field {'.'.join(parts[: index + 1])}", draft_id=draft.id) from None
        if child is None:
            child = {}
            node[key] = child
        node = child
    last: Any = int(parts[-1]) if isinstance(node, list) and parts[-1].isdigit() else parts[-1]
    if isinstance(node, dict) and len(parts) == 1 and last not in node:
        raise ReviewError(f"no field {path}", draft_id=draft.id)
    try:
        node[last] = value
    except (IndexError, TypeError):
        raise ReviewError(f"cannot set {path}", draft_id=draft.id) from None
    try:
        return Draft.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ReviewError(f"{where}: {error['msg'].removeprefix('Value error, ')}", draft_id=draft.id) from None
