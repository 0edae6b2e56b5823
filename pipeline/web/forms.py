"""A draft as the web page's form, and the form back into a draft, pure.

    fields = form_fields(draft, languages)          # what the page shows, field by field
    after, problems = apply_form(draft, form, languages)   # a Draft, or what the form got wrong

The form's names are the draft's dotted paths (`summary.ko`, `impact.scope`), so an error names
the field the person typed into, and the edit recorded in the history names the same paths.
Narrative fields have one box per language; lists of actions one line per item and language;
vocabulary fields offer their terms with their labels. What the page does not show (sources,
the review, the text) is left as it was: the review's rules refuse an edit of those anyway.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from pipeline import gate
from pipeline.fieldpath import FieldPath
from pipeline.fields import DEFAULTS, FORM, NARRATIVE, PROSE, FieldKind
from pipeline.models import Draft, Evidence
from pipeline.vocabulary import Kind, vocabulary

__all__ = [
    "FormField",
    "apply_form",
    "as_text",
    "by_language",
    "form_fields",
    "languages_for",
    "word_diff",
]

# The page starts with the case's name, as its reader does: a choice of the page's, not of the record,
# whose other fields follow in the order the models declare them (pipeline.fields.FORM).
_LEAD = "title"
_FORM = sorted(FORM, key=lambda spec: spec[0] != _LEAD)


@dataclass
class FormField:
    """One field of the form: its path, how it is edited, its value(s) and what backs it."""

    path: str
    kind: str  # "narrative", "text", "choice", "multiple", "actions", "lines"
    values: dict[str, str] = field(default_factory=dict)  # per language for narrative/actions; "" otherwise
    chosen: list[str] = field(default_factory=list)  # choice / multiple
    options: list[tuple[str, str]] = field(default_factory=list)  # (term, label)
    evidence: list[tuple[int, Evidence]] = field(default_factory=list)  # (mark number, entry)
    default: Any = None  # what an empty box stands for: a choice whose default is None may be left empty
    long: bool = False  # a text of a sentence or more (pipeline.fields.PROSE): a box of several lines


def languages_for(draft: Draft, required: Sequence[str]) -> list[str]:
    """The languages the form offers: the required ones, English and Korean, and any the draft holds."""
    found = list(dict.fromkeys([*required, "en", "ko"]))
    for name in NARRATIVE:
        for lang in getattr(draft, name) or {}:
            if lang not in found:
                found.append(lang)
    return found


def _options(terms: Kind | None) -> list[tuple[str, str]]:
    return [(t.name, t.label) for t in vocabulary().terms[terms].values()] if terms else []


def _form_field(path: str, kind: FieldKind, terms: Kind | None, value: Any, languages: Sequence[str]) -> FormField:
    if kind == "narrative":
        return FormField(path, kind, {lang: (value or {}).get(lang, "") for lang in languages})
    if kind == "choice":
        return FormField(path, kind, chosen=[value] if value else [], options=_options(terms), default=DEFAULTS[path])
    if kind == "multiple":
        return FormField(path, kind, chosen=list(value or []), options=_options(terms), default=DEFAULTS[path])
    if kind == "actions":
        lines = {lang: "\n".join((a["text"] or {}).get(lang, "") for a in value or []) for lang in languages}
        return FormField(path, kind, lines)
    if kind == "lines":
        return FormField(path, kind, {"": "\n".join(value or [])})
    shown = "" if value is None else str(value)
    return FormField(path, "text", {"": shown}, default=DEFAULTS[path], long=path in PROSE)


def form_fields(draft: Draft, languages: Sequence[str], marks: Mapping[int, Evidence] | None = None) -> list[FormField]:
    """Every editable field of the draft, in the order a reader meets them, with its evidence."""
    data = draft.model_dump(mode="json")
    out: list[FormField] = []
    for path, kind, terms in _FORM:
        item = _form_field(path, kind, terms, FieldPath.parse(path).get(data), languages)
        item.evidence = [(n, e) for n, e in (marks or {}).items() if _covers(path, e.field)]
        out.append(item)
    return out


def _covers(path: str, evidence_field: str) -> bool:
    """The evidence's field is this form field or lies within it (`summary.en`, `action_items.2`)."""
    return FieldPath.parse(evidence_field).within(FieldPath.parse(path))


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]


# What a field's reader returns when the form does not hold the field: it is left as it was.
_ABSENT = object()


def _text(form: Mapping[str, Any], name: str) -> str | None:
    value = form.get(name)
    return None if value is None else str(value).replace("\r\n", "\n").strip()


def _per_language(form: Mapping[str, Any], path: str, languages: Sequence[str]) -> dict[str, str | None] | None:
    """The boxes of a field with one per language, or None when the form holds none of them."""
    given = {lang: _text(form, f"{path}.{lang}") for lang in languages}
    return None if all(v is None for v in given.values()) else given


def _read_narrative(form: Mapping[str, Any], path: str, old: Any, languages: Sequence[str]) -> Any:
    """The texts typed, beside the draft's texts in languages the form does not offer."""
    given = _per_language(form, path, languages)
    if given is None:
        return _ABSENT
    kept = {lang: text for lang, text in (old or {}).items() if lang not in languages}
    kept.update({lang: text for lang, text in given.items() if text})
    return kept or None


def _read_one(form: Mapping[str, Any], path: str, old: Any, languages: Sequence[str]) -> Any:
    """A box or a choice: an empty one is the field's default (None, or the vocabulary's `unknown`)."""
    value = _text(form, path)
    return _ABSENT if value is None else value or DEFAULTS[path]


def _read_multiple(form: Mapping[str, Any], path: str, old: Any, languages: Sequence[str]) -> Any:
    """The boxes ticked. Boxes come back in the vocabulary's order: terms kept keep their place (the
    drafter's ranking, or the person's), new ones follow."""
    if f"{path}.present" not in form:  # the field was not on the page; on it, no box ticked means none
        return _ABSENT
    chosen = form.get(path)
    values = [str(v) for v in (chosen if isinstance(chosen, list) else ([chosen] if chosen else []))]
    staying = [term for term in old if term in values]
    return list(dict.fromkeys([*staying, *values]))


def _action(old: list[Any], index: int, per_lang: dict[str, list[str]]) -> dict[str, Any] | None:
    """Action `index` with each language's line in place of its text in that language (gone when the
    language has no such line); its texts in languages the form does not offer kept."""
    texts = dict((old[index]["text"] if index < len(old) else {}) or {})
    for lang, lines in per_lang.items():
        if index < len(lines):
            texts[lang] = lines[index]
        else:
            texts.pop(lang, None)
    return {"text": texts} if texts else None


def _read_actions(form: Mapping[str, Any], path: str, old: Any, languages: Sequence[str]) -> Any:
    """One action a line, the lines of each language side by side."""
    given = _per_language(form, path, languages)
    if given is None:
        return _ABSENT
    per_lang = {lang: _lines(text or "") for lang, text in given.items()}
    count = max((len(lines) for lines in per_lang.values()), default=0)
    return [action for index in range(count) if (action := _action(old or [], index, per_lang))]


def _read_lines(form: Mapping[str, Any], path: str, old: Any, languages: Sequence[str]) -> Any:
    value = _text(form, path)
    return _ABSENT if value is None else _lines(value)


_READERS: dict[str, Callable[[Mapping[str, Any], str, Any, Sequence[str]], Any]] = {
    "narrative": _read_narrative,
    "text": _read_one,
    "choice": _read_one,
    "multiple": _read_multiple,
    "actions": _read_actions,
    "lines": _read_lines,
}


def apply_form(
    draft: Draft, form: Mapping[str, Any], languages: Sequence[str], removed: gate.Removed | None = None
) -> tuple[Draft | None, list[tuple[str, str]]]:
    """The draft with the form's values, or None and each problem as (field path, one line).

    `form` maps a path to its value: a string, or a list of strings for a field of several
    choices (`form.getlist`). A path the form does not hold is left as it was. The values pass the gate
    (pipeline.gate): what it removes is added to `removed`, for the edit's history to say.
    """
    data = draft.model_dump(mode="json")
    for path, kind, _ in FORM:
        at = FieldPath.parse(path)
        value = _READERS[kind](form, path, at.get(data), languages)
        if value is not _ABSENT:
            data = at.set(data, value)
    try:
        return Draft.model_validate(data, context={"gate": gate.Removed() if removed is None else removed}), []
    except ValidationError as exc:
        return None, [(".".join(str(p) for p in error["loc"]), error["msg"]) for error in exc.errors()]


def word_diff(before: Any, after: Any) -> list[tuple[str, str]]:
    """What an edit changed, word by word: ("same" | "del" | "ins", words), each value as text (`as_text`).

    A deletion and the insertion that replaces it are two runs with a space between them (the template
    shows them as <del> and <ins>, struck through and underlined): never "timedstalled"."""
    old, new = as_text(before), as_text(after)
    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            if out and out[-1][0] == "del":
                out.append(("same", " "))
            out.append(("ins", "".join(b[j1:j2])))
    return out


_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")


def _localized(value: Any) -> bool:
    """A text in several languages ({"en": ..., "ko": ...})."""
    return isinstance(value, dict) and bool(value) and all(_LANGUAGE.match(str(k)) for k in value)


def as_text(value: Any) -> str:
    """A field's value (as JSON) as a person reads it: a text as itself, a text in several languages
    language by language ("en: ..."), an action by its text, a list item by item; never a Python repr."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if _localized(value):
        return " · ".join(f"{lang}: {as_text(text)}" for lang, text in value.items())
    if isinstance(value, dict):
        if set(value) == {"text"}:  # an action
            return as_text(value["text"])
        return " · ".join(f"{key}: {as_text(v)}" for key, v in value.items())
    if isinstance(value, list):
        return "; ".join(as_text(item) for item in value)
    return str(value)


def by_language(value: Any) -> list[tuple[str, str]]:
    """A field's value as (language, text) lines, for a text in several languages or a list of actions;
    ("", text) for any other value (`as_text`)."""
    if _localized(value):
        return [(lang, as_text(text)) for lang, text in value.items()]
    if isinstance(value, list) and value and all(isinstance(a, dict) and _localized(a.get("text")) for a in value):
        languages = list(dict.fromkeys(lang for action in value for lang in action["text"]))
        return [(lang, "\n".join(a["text"][lang] for a in value if lang in a["text"])) for lang in languages]
    return [("", as_text(value))]
