"""The assist's rules, pure: what a draft lacks, what the model is told, which of its proposals stand,
and what accepting one does to the draft.

A proposal stands only if every passage it cites is in the draft's text (white space aside), it cites
at least one, its value is one the record format takes (a root cause from the vocabulary), and, for a
translation, it is in Korean. Everything else is dropped, and counted, with the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pipeline import review
from pipeline.assist.answers import ENGLISH_FIELDS, FieldAnswer, Prompt, ProposeAnswer, TranslateAnswer
from pipeline.errors import ReviewError
from pipeline.fieldpath import FieldPath
from pipeline.fields import ACTION_LISTS, CHOICES, NARRATIVE, TRANSLATED
from pipeline.models import AssistRun, Draft, DroppedProposal, Evidence, MachineTranslation, Proposal, utc_now
from pipeline.vocabulary import vocabulary

__all__ = [
    "ASSIST_FIELDS",
    "Asked",
    "accept_proposal",
    "check_fields",
    "checked_proposals",
    "checked_translations",
    "empty",
    "english_texts",
    "find_proposal",
    "lacking",
    "locate",
    "propose_messages",
    "sha",
    "stale_translations",
    "translate_messages",
    "untranslated",
    "with_proposals",
]

# A passage longer than this is a paragraph pasted whole, not a passage a reviewer can check; shorter than
# this (in words and characters both) it is a word that stands anywhere, not a claim's ground.
PASSAGE_LIMIT = 600
PASSAGE_MIN_WORDS, PASSAGE_MIN_CHARS = 3, 15
PASSAGES_MAX = 8
# What a record keeps of a proposal: a field of the library is a few sentences, never pages.
TEXT_LIMIT = 4000
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LETTER = re.compile(r"[^\W\d_]")
# A proposal may state no number and no link that its text does not hold: the model must not invent them.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LINK = re.compile(r"https?://[^\s)\]>\"']+")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def empty(value: Any) -> bool:
    """A field with no value: nothing, an empty text or list, or the vocabulary's `unknown`."""
    return value in (None, "", "unknown", [], {})


# What `--fields` may name: the fields proposed in English, and the texts translated (every narrative
# text of the record and each action's: pipeline.fields.TRANSLATED).
ASSIST_FIELDS = tuple(dict.fromkeys([*ENGLISH_FIELDS, *TRANSLATED]))


def check_fields(fields: Iterable[str]) -> list[str]:
    """`fields` as given, or a ValueError naming the ones the assist does not know."""
    fields = list(fields)
    unknown = [f for f in fields if f not in ASSIST_FIELDS]
    if unknown:
        raise ValueError(f"the assist knows the fields {', '.join(ASSIST_FIELDS)}; not {', '.join(unknown)}")
    return fields


def lacking(draft: Draft, fields: Iterable[str] | None = None) -> list[str]:
    """The fields the model may propose in English that the draft has no value for (of `fields`, when given)."""
    wanted = [f for f in (fields if fields is not None else ENGLISH_FIELDS) if f in ENGLISH_FIELDS]
    return [f for f in wanted if empty(review.value_at(draft, ENGLISH_FIELDS[f]))]


def english_texts(draft: Draft) -> dict[str, str]:
    """Every narrative text's English, by the path its translation goes to (summary.ko -> its English)."""
    found: dict[str, str] = {}
    for name in NARRATIVE:
        english = review.value_at(draft, f"{name}.en")
        if english:
            found[name] = english
    for name in ACTION_LISTS:
        for index, action in enumerate(getattr(draft, name)):
            if action.text.get("en"):
                found[f"{name}.{index}.text"] = action.text["en"]
    return found


def stale_translations(draft: Draft, language: str = "ko") -> list[str]:
    """Machine translations a person accepted whose English has changed since: they say what it no longer does."""
    english = english_texts(draft)
    return [
        path
        for path, made in draft.machine_translated.items()
        if path.endswith(f".{language}") and english.get(path.rsplit(".", 1)[0]) != made.english
    ]


def untranslated(draft: Draft, language: str = "ko", fields: Iterable[str] | None = None) -> dict[str, str]:
    """The English to translate, by the path of its translation: texts with English and no `language`, and
    stale machine translations (of `fields`, the narrative fields or remediation and action_items, when given)."""
    stale = set(stale_translations(draft, language))
    wanted = set(fields) if fields is not None else None
    found = {}
    for path, english in english_texts(draft).items():
        target = f"{path}.{language}"
        if wanted is not None and FieldPath.parse(path).root not in wanted:
            continue
        if empty(review.value_at(draft, target)) or target in stale:
            found[target] = english
    return found


# ------------------------------------------------------------ the messages


def propose_messages(draft: Draft, fields: Sequence[str], prompt: Prompt, text_limit: int) -> list[dict[str, str]]:
    """The system prompt and the question: the fields wanted and the draft's text (its first `text_limit`
    characters: a long logbook is cut, and said to be)."""
    text = draft.text or ""
    question: dict[str, Any] = {
        "organisation": draft.org,
        "title": (draft.title or {}).get("en"),
        "fields": list(fields),
    }
    for name in fields:  # a choice's terms (root_cause_terms), for the model to pick one of
        if name in CHOICES:
            question[f"{name}_terms"] = vocabulary().names(CHOICES[name])
    if len(text) > text_limit:
        question["note"] = f"the text is cut at {text_limit} of its {len(text)} characters"
        text = text[:text_limit]
    question["text"] = text
    return [
        {"role": "system", "content": prompt.text},
        {"role": "user", "content": json.dumps(question, ensure_ascii=False, indent=1)},
    ]


def translate_messages(english: dict[str, str], prompt: Prompt) -> list[dict[str, str]]:
    fields = [{"path": path, "text": text} for path, text in english.items()]
    return [
        {"role": "system", "content": prompt.text},
        {"role": "user", "content": json.dumps({"fields": fields}, ensure_ascii=False, indent=1)},
    ]


# ------------------------------------------------------------ checking the answers


def locate(text: str, passage: str) -> tuple[int, int] | None:
    """Where `passage` stands in `text`, white space aside (a line break in one, a space in the other), as
    whole words (not the middle of one); None when it does not. The offsets are the text's own, so the
    passage can be shown and linked."""
    words = passage.split()
    if not words:
        return None
    found = re.search(r"(?<!\w)" + r"\s+".join(re.escape(word) for word in words) + r"(?!\w)", text)
    return (found.start(), found.end()) if found else None


def _invented(proposed: str, text: str, *, numbers: bool = True) -> str | None:
    """A number or a link the proposal states that the text does not hold (the first), or None. A translation
    is held to its links only: its dates are written with other numbers (May is 5월)."""
    for pattern in (_LINK, _NUMBER) if numbers else (_LINK,):
        for found in pattern.finditer(proposed):
            if found.group(0).rstrip(".,") not in text:
                return found.group(0)
    return None


def _korean(text: str) -> bool:
    """Mostly Korean letters: a Hangul syllable in English text is not a translation."""
    letters = _LETTER.findall(text)
    return bool(letters) and len(_HANGUL.findall(text)) >= 0.3 * len(letters)


def _value(path: str, text: str, term: str | None) -> Any:
    """What accepting a proposal writes at its path."""
    if path in CHOICES:
        return term
    if path in ACTION_LISTS:
        return [{"text": {"en": line.strip(" -•*\t")}} for line in text.splitlines() if line.strip(" -•*\t")]
    return text.strip()


def _unwanted(draft: Draft, item: FieldAnswer, fields: Sequence[str], kept: dict[str, Proposal]) -> str | None:
    """Why nobody wants the proposal now: not asked for, proposed already, or its field filled since."""
    path = ENGLISH_FIELDS[item.field]
    if item.field not in fields:
        return "not asked for"
    if path in kept:
        return "proposed twice; the first kept"
    if not empty(review.value_at(draft, path)):
        return "the field was filled meanwhile"
    return None


def _text_fault(item: FieldAnswer) -> str | None:
    if not item.text.strip():
        return "empty"
    if len(item.text) > TEXT_LIMIT:
        return f"longer than {TEXT_LIMIT} characters"
    return None


def _passage_fault(text: str, passages: list[str]) -> str | None:
    """Why the passages cited are no ground: none, too many, too long, too short, or not in the text."""
    if not passages:
        return "cites no passage of the text"
    if len(passages) > PASSAGES_MAX:
        return f"cites more than {PASSAGES_MAX} passages"
    if any(len(p) > PASSAGE_LIMIT for p in passages):
        return f"a passage longer than {PASSAGE_LIMIT} characters"
    scrap = next((p for p in passages if len(p.split()) < PASSAGE_MIN_WORDS and len(p) < PASSAGE_MIN_CHARS), None)
    if scrap is not None:
        return f"a passage of a word or two is no ground: {scrap[:40]!r}"
    missing = next((p for p in passages if locate(text, p) is None), None)
    if missing is not None:
        return f"a passage not in the text: {missing[:120]!r}"
    return None


def _claim_fault(draft: Draft, item: FieldAnswer, path: str, text: str) -> str | None:
    """Why the value is not one to keep: a number or link the text lacks, a term the vocabulary lacks (for
    a choice), or a value the record format refuses."""
    invented = _invented(item.text, text)
    if invented is not None:
        return f"states {invented[:60]!r}, which the text does not hold"
    if path in CHOICES and (item.term or "") not in vocabulary().names(CHOICES[path]):
        return f"{path.replace('_', ' ')} {(item.term or '')[:40]!r} is not a term of the vocabulary"
    try:
        review.set_field(draft, path, _value(path, item.text, item.term))
    except ReviewError as exc:
        return f"the record format refuses it: {exc.args[0].split(': ', 1)[-1]}"
    return None


@dataclass(frozen=True)
class Asked:
    """Who answered, to which prompt, when: what every proposal of one answer carries."""

    model: str
    prompt: Prompt
    made_at: datetime


def checked_proposals(
    draft: Draft, answer: ProposeAnswer, fields: Sequence[str], asked: Asked
) -> tuple[list[Proposal], list[DroppedProposal]]:
    """The proposals that stand, and the ones dropped with why (see the module's text)."""
    model, prompt, made_at = asked.model, asked.prompt, asked.made_at
    text = draft.text or ""
    kept: dict[str, Proposal] = {}
    dropped = []
    for item in answer.proposals:
        path = ENGLISH_FIELDS[item.field]
        passages = [p.strip() for p in item.passages if p.strip()]
        why = (
            _unwanted(draft, item, fields, kept)
            or _text_fault(item)
            or _passage_fault(text, passages)
            or _claim_fault(draft, item, path, text)
        )
        if why is not None:
            dropped.append(DroppedProposal(path=path, why=why))
            continue
        kept[path] = Proposal(
            path=path,
            text=item.text.strip(),
            term=item.term if path in CHOICES else None,
            passages=passages,
            model=model,
            prompt=prompt.id,
            made_at=made_at,
            text_sha=sha(text),
        )
    return list(kept.values()), dropped


def checked_translations(
    draft: Draft, answer: TranslateAnswer, english: dict[str, str], asked: Asked
) -> tuple[list[Proposal], list[DroppedProposal]]:
    model, prompt, made_at = asked.model, asked.prompt, asked.made_at
    kept: dict[str, Proposal] = {}
    dropped = []
    for item in answer.translations:
        path = item.path.strip()
        if path not in english:
            dropped.append(DroppedProposal(path=path[:120] or "-", why="not asked for"))
        elif path in kept:
            dropped.append(DroppedProposal(path=path, why="translated twice; the first kept"))
        elif not _korean(item.text):
            dropped.append(DroppedProposal(path=path, why="not Korean"))
        elif len(item.text) > TEXT_LIMIT:
            dropped.append(DroppedProposal(path=path, why=f"longer than {TEXT_LIMIT} characters"))
        elif (invented := _invented(item.text, english[path], numbers=False)) is not None:
            dropped.append(DroppedProposal(path=path, why=f"states {invented[:60]!r}, which the English does not"))
        else:
            kept[path] = Proposal(
                path=path,
                language=path.rsplit(".", 1)[1],
                text=item.text.strip(),
                translated_from=english[path],
                model=model,
                prompt=prompt.id,
                made_at=made_at,
                text_sha=sha(json.dumps(english, sort_keys=True, ensure_ascii=False)),
            )
    return list(kept.values()), dropped


def with_proposals(draft: Draft, proposals: list[Proposal], run: AssistRun, prompt_name: str) -> Draft:
    """The draft with this run's proposals beside its fields (replacing older ones of the same paths) and the
    run kept under its prompt's name."""
    paths = {p.path for p in proposals}
    kept = [p for p in draft.proposals if p.path not in paths]
    return draft.model_copy(
        update={"proposals": kept + proposals, "assist": {**draft.assist, prompt_name: run}}, deep=True
    )


# ------------------------------------------------------------ a person accepts


def find_proposal(draft: Draft, name: str) -> Proposal:
    """The proposal for `name`: a path (summary.ko, impact.scope) or a field's name (summary: its English)."""
    path = ENGLISH_FIELDS.get(name, name)
    for proposal in draft.proposals:
        if proposal.path == path:
            return proposal
    have = ", ".join(p.path for p in draft.proposals) or "none"
    raise ReviewError(f"no proposal for {name} (proposals: {have})", draft_id=draft.id)


def accept_proposal(draft: Draft, name: str, by: str) -> Draft:
    """The draft with one proposal taken as `by`'s own edit: the history records the edit as theirs, noting
    whose proposal it was; an English proposal's passages become the field's evidence; a translation is
    marked as the machine's, with the English it translates, so that it goes stale when that changes."""
    proposal = find_proposal(draft, name)
    filled = review.value_at(draft, proposal.path)
    if not empty(filled) and proposal.path not in stale_translations(draft):
        raise ReviewError(
            f"{proposal.path} has been filled since the proposal was made; edit it by hand, or empty it first",
            draft_id=draft.id,
        )
    if proposal.translated_from is not None:
        english = english_texts(draft).get(proposal.path.rsplit(".", 1)[0])
        if english != proposal.translated_from:
            raise ReviewError(
                f"the proposal for {proposal.path} translates English that has changed since; ask again",
                draft_id=draft.id,
            )
    elif draft.text is None or sha(draft.text) != proposal.text_sha:
        raise ReviewError(f"the proposal for {proposal.path} was made of an older text; ask again", draft_id=draft.id)
    value = _value(proposal.path, proposal.text, proposal.term)
    note = f"accepted the proposal of {proposal.model} ({proposal.prompt}, {proposal.made_at:%Y-%m-%d %H:%M} UTC)"
    after = review.edited(draft, review.set_field(draft, proposal.path, value), by, comment=note)
    update: dict[str, Any] = {"proposals": [p for p in after.proposals if p.path != proposal.path]}
    if proposal.translated_from is not None:
        made = MachineTranslation(
            model=proposal.model,
            prompt=proposal.prompt,
            english=proposal.translated_from,
            accepted_by=by,
            accepted_at=utc_now(),
        )
        update["machine_translated"] = {**after.machine_translated, proposal.path: made}
    else:
        text = draft.text or ""
        spans = [span for p in proposal.passages if (span := locate(text, p))]
        update["evidence"] = after.evidence + [
            Evidence(field=proposal.path, quote=text[a:b], start=a, end=b, rule=f"assist.{proposal.prompt}")
            for a, b in spans
        ]
    return after.model_copy(update=update)
