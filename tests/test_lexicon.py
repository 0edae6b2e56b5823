"""The cue words live in one module (pipeline.extract.lexicon): each module that reads a group reads the
same compiled pattern, and moving them there changed none (tests/fixtures/lexicon-before.json keeps every
pattern as it was written in its old module, flags and all)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pipeline.extract import durations, lexicon, prose, summary, symptoms
from pipeline.finder.features import NAMED

BEFORE = json.loads((Path(__file__).parent / "fixtures" / "lexicon-before.json").read_text(encoding="utf-8"))
MODULES = {"prose": prose, "summary": summary, "durations": durations, "symptoms": symptoms}


def _flat(name: str, value: object) -> dict[str, re.Pattern[str]]:
    if isinstance(value, dict):
        return {f"{name}.{k}": v for k, v in value.items()}
    if isinstance(value, tuple):
        return {f"{name}.{k}": v for k, v in enumerate(value)}
    assert isinstance(value, re.Pattern)
    return {name: value}


def test_every_moved_pattern_is_the_one_its_module_had() -> None:
    seen: dict[str, re.Pattern[str]] = {}
    for key in {k.rsplit(".", 1)[0] if k.rsplit(".", 1)[-1].isdigit() or k.count(".") > 1 else k for k in BEFORE}:
        module, name = key.split(".", 1)
        public = getattr(lexicon, name.lstrip("_"))
        assert getattr(MODULES[module], name) is public, f"{key} is not lexicon's {name.lstrip('_')}"
        seen |= _flat(key, public)
    assert {k: [p.pattern, int(p.flags)] for k, p in seen.items()} == BEFORE


def test_the_finder_weighs_the_lexicons_groups_by_their_names() -> None:
    assert [n for n in NAMED if n.startswith("cue.")] == list(lexicon.GROUPS)
    found = lexicon.hits("We rolled back the deploy.")
    assert found["cue.remediation"] and found["cue.fix"]
    assert not found["cue.detection"] and not found["cue.modal"]
