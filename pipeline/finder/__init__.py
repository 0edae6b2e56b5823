"""The finder: for each passage field, every candidate sentence, item or row of a document ranked by
a model learned from reviewed cases (`pipeline.finder.model`), its confidence calibrated.

    finder = load()                      # the packaged model; load(path) a library's own (`incidentlib learn`)
    finder.rank(extraction)              # the best candidates of each field, surest first
    finder.marks(text, sections)         # each candidate's likeliest field, for the document view

The model ships inside the package (`default.json`, trained on a labelled corpus of public
postmortems by `bench/drafts.py --train`); nothing is downloaded when it is loaded.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from pipeline.extract import Extraction
from pipeline.finder.candidates import Candidate, candidates
from pipeline.finder.features import matrix
from pipeline.finder.model import FIELDS, FinderModel, written
from pipeline.models import Section

__all__ = ["DEFAULT_MODEL", "FIELDS", "FLOOR", "Finder", "Found", "Mark", "load"]

DEFAULT_MODEL = "default.json"
_PER_FIELD = 3
_KEPT = 4
# The least a candidate must score for the finder to offer it for a field, or to mark it in the document
# view with that field: below it, it is right so seldom that showing it costs a writer more than it
# gives. Chosen on the corpus's held-out folds (bench/drafts.py): offering everything gives hit@3 .747,
# this floor .721, a floor of .2 .710.
FLOOR = 0.1


@dataclass(frozen=True)
class Found:
    """A candidate for a field, how sure the model is (calibrated), and the features that weighed most."""

    field: str
    candidate: Candidate
    confidence: float
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Mark:
    """A span of the text and the field it most likely serves."""

    start: int
    end: int
    field: str
    confidence: float


class Finder:
    """A loaded model and what it answers about one document."""

    def __init__(self, model: FinderModel) -> None:
        self.model = model
        self._cache: dict[tuple[object, ...], tuple[list[Candidate], sp.csr_matrix, dict[str, np.ndarray]]] = {}

    @property
    def name(self) -> str:
        return self.model.name

    def _scored(
        self, text: str, sections: Sequence[Section]
    ) -> tuple[list[Candidate], sp.csr_matrix, dict[str, np.ndarray]]:
        """The document's candidates, their features and each field's scores; the last few kept (a
        crawl asks for the ranking and the written fields of one document in turn)."""
        key = (text, *((s.heading, s.field, s.text, s.confidence, *s.quotes) for s in sections))
        if key not in self._cache:
            found = candidates(text, sections)
            x = matrix(found)
            scores = {name: self.model.score(x, name) if found else np.zeros(0) for name in self.model.fields}
            if len(self._cache) >= _KEPT:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = (found, x, scores)
        return self._cache[key]

    def _of(self, extraction: Extraction) -> tuple[list[Candidate], sp.csr_matrix, dict[str, np.ndarray]]:
        return self._scored(extraction.text or "", extraction.sections)

    def rank(self, extraction: Extraction, per_field: int = _PER_FIELD) -> list[Found]:
        """The best `per_field` candidates of each field the model knows, surest first."""
        found, x, scores = self._of(extraction)
        ranked: list[Found] = []
        for name, p in scores.items():
            for i in np.argsort(-p, kind="stable")[:per_field]:
                c = found[int(i)]
                ranked.append(Found(name, c, round(float(p[i]), 3), self.model.reasons(c, x[int(i)], name)))
        return ranked

    def written(self, extraction: Extraction, threshold: float) -> dict[str, list[Found]]:
        """The candidates of each field the model may write (held-out figures good enough) at or above
        the threshold, in the order they stand in the text."""
        found, x, scores = self._of(extraction)
        chosen: dict[str, list[Found]] = {}
        for name, p in scores.items():
            if not self.model.writes(name):
                continue
            picked = sorted(written(p, name, threshold))
            if picked:
                chosen[name] = [
                    Found(name, found[i], round(float(p[i]), 3), self.model.reasons(found[i], x[i], name))
                    for i in picked
                ]
        return chosen

    def marks(self, text: str | None, sections: Sequence[Section]) -> list[Mark]:
        """Each candidate of the text with the field it most likely serves, where the model gives that
        field `FLOOR` or more: the document view's marks."""
        found, _, scores = self._scored(text or "", sections)
        if not found or not scores:
            return []
        names = list(scores)
        table = np.vstack([scores[n] for n in names])
        best = table.argmax(axis=0)
        return [
            Mark(c.start, c.end, names[int(best[i])], round(float(table[best[i], i]), 3))
            for i, c in enumerate(found)
            if table[best[i], i] >= FLOOR
        ]


def load(path: Path | None = None) -> Finder:
    """The finder of the model at `path`, or the packaged one; ValueError naming the file for a file that
    is not a model."""
    if path is None:
        return _packaged()
    try:
        return Finder(FinderModel.from_json(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the finder model: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


@functools.cache
def _packaged() -> Finder:
    text = resources.files(__package__).joinpath(DEFAULT_MODEL).read_text(encoding="utf-8")
    return Finder(FinderModel.from_json(text))
