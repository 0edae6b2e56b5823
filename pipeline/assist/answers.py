"""What the model must answer, as pydantic models whose JSON Schema is sent with the request (structured
output), and the prompts, read from their versioned files.

The models forbid extra keys and give no defaults, so that their schema is the strict form hosted APIs
require (every property required, no additional properties) and local servers constrain decoding to.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict

from pipeline.fields import NARRATIVE, PASSAGE_PARTS

__all__ = [
    "ENGLISH_FIELDS",
    "FieldAnswer",
    "Prompt",
    "ProposeAnswer",
    "TranslateAnswer",
    "TranslationAnswer",
    "load_prompt",
]

# The fields the model may propose in English: those prompts/propose.md says how to write, a deliberate
# subset of the record kept in step with the prompt. Every narrative text but the title (a page names
# itself, and the drafter takes it from there); the impact as one sentence; the root cause's class; the
# remediation's steps. The vocabularies' lists are the drafter's, read off the text's words.
ProposedField = Literal[
    "summary", "symptoms_text", "trigger", "detection", "impact", "root_cause", "lessons", "remediation"
]


def _english_path(name: str) -> str:
    """The path of the record a proposal of `name` fills: a narrative text's English, a part, or the field."""
    if name in NARRATIVE:
        return f"{name}.en"
    if name in PASSAGE_PARTS:  # of a field of parts, the part the model writes: the sentence
        return f"{name}.{PASSAGE_PARTS[name]}"
    return name


# Each field the model may propose and the path of the record it fills.
ENGLISH_FIELDS: dict[str, str] = {name: _english_path(name) for name in get_args(ProposedField)}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldAnswer(_Strict):
    field: ProposedField
    text: str
    term: str | None
    passages: list[str]


class ProposeAnswer(_Strict):
    proposals: list[FieldAnswer]


class TranslationAnswer(_Strict):
    path: str
    text: str


class TranslateAnswer(_Strict):
    translations: list[TranslationAnswer]


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    text: str

    @property
    def id(self) -> str:
        """As proposals record it: `propose/1`. A new version asks again what the old one answered."""
        return f"{self.name}/{self.version}"


@functools.cache
def load_prompt(name: str) -> Prompt:
    """The prompt `prompts/<name>.md`: YAML front matter (name, version), then the system message."""
    raw = resources.files("pipeline.assist").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")
    _, front, body = raw.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["name"] == name, f"prompts/{name}.md names itself {meta['name']}"
    return Prompt(name=name, version=int(meta["version"]), text=body.strip())
