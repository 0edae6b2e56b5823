"""What the record format says about its fields, read off the models and nothing else.

`pipeline.models` is the one source of the record format; this module only introspects its classes
(their `model_fields`, each field's annotation, default and markers, `Kept` and `Published`), so that
no list of fields is written anywhere else. A field added to `CaseContent` reaches the web form, the
queue's lacks, the review's rules and the assist's translations with no second list to find.

    NARRATIVE      the localized texts (`Texts`, one text per language): title, summary, trigger, ...
    ACTION_LISTS   lists of actions, each one localized text: remediation, action_items
    LINE_LISTS     lists of plain values, edited one a line: related, docs
    CHOICES        one term of a vocabulary, with the vocabulary: date_kind, severity, root_cause
    TERM_LISTS     several terms of a vocabulary: domain, symptoms, components, contributing
    PARTS          fields made of named parts (a model of their own): impact, timeline, review
    DEFAULTS       each content field's default and each part's, as JSON: severity "unknown", impact.scope "unknown"
    REQUIRED       what a published case needs that a draft may lack (publication's own fields aside)
    FORM           what a person edits, field by field in the record's order, and how
    PROSE          the plain texts of a sentence or more (marked `Prose`), parts included: impact.scope
    PASSAGE_PARTS  of a field of parts, the one part a passage of the text goes into: impact -> scope
    KEPT           a draft's fields no edit may change; BOOKKEEPING those of them an approval does not cover
    PUBLISHED      a case's fields that publication writes itself
    WITHDRAWAL     a case's own fields, which no draft has: withdrawn, withdrawn_reason, withdrawn_by, merged_into

Each is also a function of the model (`narrative(CaseContent)`), so that a variant of the format
gets its own lists; the tests build one to show the lists follow the model.
"""

from __future__ import annotations

import functools
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from pipeline.fieldpath import FieldPath
from pipeline.models import Case, CaseContent, Draft, Kept, Prose, Published, Term, Texts, Withdrawing
from pipeline.vocabulary import Kind

__all__ = [
    "ACTION_LISTS",
    "BOOKKEEPING",
    "CHOICES",
    "DEFAULTS",
    "FORM",
    "KEPT",
    "LINE_LISTS",
    "NARRATIVE",
    "OPTIONAL_NARRATIVE",
    "PARTS",
    "PASSAGE_PARTS",
    "PROSE",
    "PUBLISHED",
    "REQUIRED",
    "REQUIRED_NARRATIVE",
    "TERM_LISTS",
    "TRANSLATED",
    "WITHDRAWAL",
    "FieldKind",
    "action_lists",
    "bookkeeping",
    "choices",
    "defaults",
    "form",
    "kept",
    "kind_of",
    "line_lists",
    "localized",
    "narrative",
    "parts",
    "passage_parts",
    "prose",
    "published",
    "required",
    "term_lists",
    "withdrawal",
]

# How a field is held, and so how a person edits it: "multiple" is a list of vocabulary terms,
# "parts" a model of its own (edited part by part), "records" a list of models other than actions
# (a case's sources: not edited field by field).
FieldKind = Literal["narrative", "text", "choice", "multiple", "actions", "lines", "parts", "records"]


def _bare(annotation: Any) -> tuple[Any, list[Any]]:
    """The type without `| None` and `Annotated`, and the Annotated metadata taken off on the way."""
    metadata: list[Any] = []
    while True:
        if get_origin(annotation) is Annotated:
            metadata += annotation.__metadata__
            annotation = annotation.__origin__
        elif get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation):
            rest = [arg for arg in get_args(annotation) if arg is not type(None)]
            if len(rest) != 1:
                return annotation, metadata
            annotation = rest[0]
        else:
            return annotation, metadata


_TEXTS, _ = _bare(Texts)


def _term(metadata: list[Any]) -> Kind | None:
    return next((m.kind for m in metadata if isinstance(m, Term)), None)


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _of_texts(model: type[BaseModel]) -> bool:
    """A model whose every field is a localized text: an action."""
    return all(kind_of(info)[0] == "narrative" for info in model.model_fields.values())


@functools.lru_cache(maxsize=4096)  # a model's fields are made once: asked of a page's every field, it is read once
def kind_of(info: FieldInfo) -> tuple[FieldKind, Kind | None]:
    """How a field is held, and the vocabulary its terms come from (for a choice or a list of terms)."""
    annotation, metadata = _bare(info.annotation)
    metadata += info.metadata
    if annotation == _TEXTS:
        return "narrative", None
    if _term(metadata):
        return "choice", _term(metadata)
    if _is_model(annotation):
        return "parts", None
    if get_origin(annotation) is list:
        item, item_metadata = _bare(get_args(annotation)[0])
        if _term(item_metadata):
            return "multiple", _term(item_metadata)
        if _is_model(item):
            return ("actions" if _of_texts(item) else "records"), None
        return "lines", None
    return "text", None


def _named(model: type[BaseModel], kind: FieldKind) -> tuple[str, ...]:
    return tuple(name for name, info in model.model_fields.items() if kind_of(info)[0] == kind)


def _vocabularies(model: type[BaseModel], kind: FieldKind) -> dict[str, Kind]:
    found = {name: kind_of(info) for name, info in model.model_fields.items()}
    return {name: vocabulary for name, (how, vocabulary) in found.items() if how == kind and vocabulary}


def narrative(model: type[BaseModel] = CaseContent) -> tuple[str, ...]:
    return _named(model, "narrative")


def action_lists(model: type[BaseModel] = CaseContent) -> tuple[str, ...]:
    return _named(model, "actions")


def line_lists(model: type[BaseModel] = CaseContent) -> tuple[str, ...]:
    return _named(model, "lines")


def choices(model: type[BaseModel] = CaseContent) -> dict[str, Kind]:
    return _vocabularies(model, "choice")


def term_lists(model: type[BaseModel] = CaseContent) -> dict[str, Kind]:
    return _vocabularies(model, "multiple")


def parts(model: type[BaseModel] = CaseContent) -> dict[str, tuple[str, ...]]:
    """Each field that is a model of its own, with its parts' names."""
    found = {name: _bare(info.annotation)[0] for name, info in model.model_fields.items()}
    return {name: tuple(sub.model_fields) for name, sub in found.items() if _is_model(sub)}


def prose(model: type[BaseModel] = CaseContent) -> tuple[str, ...]:
    """The fields marked `Prose`, and each part so marked as `field.part` (impact.scope)."""
    found = list(_marked(model, Prose))
    for name, names in parts(model).items():
        sub = _bare(model.model_fields[name].annotation)[0]
        found += [
            f"{name}.{part}" for part in names if any(isinstance(m, Prose) for m in sub.model_fields[part].metadata)
        ]
    return tuple(found)


def passage_parts(model: type[BaseModel] = CaseContent) -> dict[str, str]:
    """Of each field of parts with one part marked `Prose`, that part: where a passage of the text goes, the
    one sentence of the field (impact's scope; its users and region are read off that sentence). A
    suggestion taken into the field is written there, and the assist proposes that part."""
    found: dict[str, list[str]] = {}
    for path in prose(model):
        at = FieldPath.parse(path)
        if len(at.parts) == 2:
            found.setdefault(at.root, []).append(str(at.parts[1]))
    return {name: names[0] for name, names in found.items() if len(names) == 1}


def _json(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def defaults(model: type[BaseModel] = CaseContent) -> dict[str, Any]:
    """Each field's default, and each part's (`impact.scope`), as JSON; a required field has none."""
    found: dict[str, Any] = {}
    parted = parts(model)
    for name, info in model.model_fields.items():
        if info.is_required():
            continue
        found[name] = _json(info.get_default(call_default_factory=True))
        if name in parted:
            found |= {f"{name}.{part}": value for part, value in found[name].items()}
    return found


def _marked(model: type[BaseModel], marker: type) -> tuple[str, ...]:
    return tuple(name for name, info in model.model_fields.items() if any(isinstance(m, marker) for m in info.metadata))


def kept(model: type[BaseModel] = Draft, base: type[BaseModel] = CaseContent) -> tuple[str, ...]:
    """The fields marked `Kept`: a draft's own before those it shares with a case (`base`), so that an
    edit that fakes an approval (the state and the review) is told about the state."""
    marked = _marked(model, Kept)
    return (*(n for n in marked if n not in base.model_fields), *(n for n in marked if n in base.model_fields))


def bookkeeping(model: type[BaseModel] = Draft) -> frozenset[str]:
    """The kept fields that are the review's own bookkeeping, not part of what a reviewer approves."""
    return frozenset(
        name
        for name, info in model.model_fields.items()
        if any(isinstance(m, Kept) and not m.approved for m in info.metadata)
    )


def published(model: type[BaseModel] = Case) -> tuple[str, ...]:
    """The fields of a case marked `Published`: publication writes them itself."""
    return _marked(model, Published)


def withdrawal(case: type[BaseModel] = Case) -> tuple[str, ...]:
    """The withdrawal's fields, which no draft has (`withdraw` writes them, a republication keeps them):
    those of `case` marked `Withdrawing`. A case's file leaves them out while unset."""
    return _marked(case, Withdrawing)


def required(case: type[BaseModel] = Case, content: type[BaseModel] = CaseContent) -> tuple[str, ...]:
    """What a case requires that a draft's content may lack, but for what publication writes itself."""
    written = published(case)
    return tuple(
        name
        for name, info in case.model_fields.items()
        if info.is_required() and not content.model_fields[name].is_required() and name not in written
    )


def localized(path: str, model: type[BaseModel] = Draft) -> bool:
    """Whether a dotted path names a localized text (one text per language), read off the model:
    `summary`, `remediation.0.text`; not `summary.en` (one of its languages) nor `impact.scope`."""
    try:
        parts = FieldPath.parse(path).parts
    except ValueError:
        return False
    info: FieldInfo | None = None
    current: Any = model
    for part in parts:
        if isinstance(part, int):
            if info is None or get_origin(current) is not list:
                return False
            current = _bare(get_args(current)[0])[0]  # an item of the list
            info = None
            continue
        if not _is_model(current) or part not in current.model_fields:
            return False
        info = current.model_fields[part]
        current = _bare(info.annotation)[0]
    return info is not None and kind_of(info)[0] == "narrative"


def form(
    model: type[BaseModel] = CaseContent, case: type[BaseModel] = Case
) -> tuple[tuple[str, FieldKind, Kind | None], ...]:
    """What a person edits on the page, in the record's order: (path, kind, vocabulary) of each field
    neither kept by the pipeline nor written by publication, a field of parts part by part. A list of
    records (the sources) is no form field."""
    left_out = {*_marked(model, Kept), *published(case)}
    out: list[tuple[str, FieldKind, Kind | None]] = []
    for name, info in model.model_fields.items():
        if name in left_out:
            continue
        how, vocabulary = kind_of(info)
        if how == "parts":
            sub = _bare(info.annotation)[0]
            out += [(f"{name}.{part}", *kind_of(part_info)) for part, part_info in sub.model_fields.items()]
        elif how != "records":
            out.append((name, how, vocabulary))
    return tuple(out)


NARRATIVE = narrative()
ACTION_LISTS = action_lists()
LINE_LISTS = line_lists()
CHOICES = choices()
TERM_LISTS = term_lists()
PARTS = parts()
DEFAULTS = defaults()
REQUIRED = required()
REQUIRED_NARRATIVE = tuple(name for name in NARRATIVE if name in REQUIRED)
OPTIONAL_NARRATIVE = tuple(name for name in NARRATIVE if name not in REQUIRED)
# Every localized text of a case: the narrative fields and each action's text (what is translated).
TRANSLATED = (*NARRATIVE, *ACTION_LISTS)
FORM = form()
PROSE = prose()
PASSAGE_PARTS = passage_parts()
KEPT = kept()
BOOKKEEPING = bookkeeping()
PUBLISHED = published()
WITHDRAWAL = withdrawal()
