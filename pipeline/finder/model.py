"""The finder's model, pure: per passage field a logistic regression over `features`, calibrated.

Why a linear model and not something bigger: the labelled data is tens of documents (the corpus's,
then the library's own reviews), and a linear model over hashed words and named features is what that
much data supports; its weights are a small JSON file (no pickle: a model file a library learned is
loaded without running any of its code), scored by one sparse dot product with no network.

Confidence is calibrated where it is used: a field's scores are mapped (Platt scaling) on scores the
model gave to documents it was not trained on (folds grouped by publisher), so a passage offered at
.8 is right about 80 % of the time on held-out publishers, and the write threshold means what it says.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sklearn.linear_model import LogisticRegression

from pipeline.finder.candidates import Candidate
from pipeline.finder.features import HASHED, NAMED, matrix, slots, tokens
from pipeline.finder.labels import contains, covered_share, right

__all__ = [
    "FIELDS",
    "FORMAT",
    "Document",
    "FieldFigures",
    "FinderModel",
    "cross_validate",
    "fit",
    "publisher_folds",
    "written",
]

# The passage fields the finder ranks candidates for, in the order a case tells them.
FIELDS = ("symptoms_text", "trigger", "impact", "detection", "root_cause", "remediation", "action_items", "lessons")
LISTS = frozenset({"remediation", "action_items"})
# How many candidates a field is written from at most: a narrative is a passage or two, a list its steps.
WRITE_LIMIT = {name: 10 if name in LISTS else 2 for name in FIELDS}
FORMAT = 1
C = 1.0  # the regularisation, chosen by grouped cross-validation over the corpus (bench/drafts.py --cv)
_FOLDS = 5
_CALIBRATION_FOLDS = 4
_CALIBRATED_TOP = 15
_NEGLIGIBLE = 5e-3
_MEASURED_ON = 5  # documents a written figure must rest on before the finder may write a field


@dataclass
class Document:
    """A labelled document: its candidates and, per field it is labelled for, the passages a person
    chose for that field (an empty list: the document states no such passage). `group` is its
    publisher: folds never split one."""

    name: str
    group: str
    candidates: list[Candidate]
    passages: dict[str, list[str]]
    _x: sp.csr_matrix | None = field(default=None, repr=False)
    _labels: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def x(self) -> sp.csr_matrix:
        if self._x is None:
            self._x = matrix(self.candidates)
        return self._x

    def labels(self, name: str) -> np.ndarray:
        if name not in self._labels:
            chosen = self.passages.get(name) or []
            self._labels[name] = np.array([right(c.text, chosen) for c in self.candidates], dtype=bool)
        return self._labels[name]


class _Weights(BaseModel):
    model_config = ConfigDict(extra="forbid")

    intercept: float
    hashed: dict[int, float] = {}
    named: dict[str, float] = {}
    scale: float = 1.0  # Platt: p = sigmoid(scale * logit + shift)
    shift: float = 0.0
    write: bool = False  # held-out figures good enough for the finder to write the field, not only offer


class _File(BaseModel):
    """The model file's format: numbers and names, nothing executable."""

    model_config = ConfigDict(extra="forbid")

    format: int = Field(ge=1, le=FORMAT)
    name: str = Field(min_length=1, max_length=100, pattern=r"^[\w.@+-]+$")
    hashed: int
    trained: dict[str, Any] = {}
    fields: dict[str, _Weights]
    figures: dict[str, dict[str, Any]] = {}


@dataclass(frozen=True)
class FinderModel:
    """A trained finder: per field its weights and calibration; `name` says which model drafted a field."""

    name: str
    weights: dict[str, _Weights]
    trained: dict[str, Any]
    figures: dict[str, dict[str, Any]]

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(name for name in FIELDS if name in self.weights)

    def writes(self, name: str) -> bool:
        return name in self.weights and self.weights[name].write

    def _vector(self, name: str) -> np.ndarray:
        cached = _VECTORS.get((id(self), name))
        if cached is None:
            w = self.weights[name]
            cached = np.zeros(HASHED + len(NAMED))
            for index, value in w.hashed.items():
                cached[index] = value
            for n, feature in enumerate(NAMED):
                cached[HASHED + n] = w.named.get(feature, 0.0)
            _VECTORS[(id(self), name)] = cached
        return cached

    def logits(self, x: sp.csr_matrix, name: str) -> np.ndarray:
        return np.asarray(x @ self._vector(name)).ravel() + self.weights[name].intercept

    def score(self, x: sp.csr_matrix, name: str) -> np.ndarray:
        """The calibrated probability that each row's candidate is a right passage for the field."""
        w = self.weights[name]
        return _sigmoid(w.scale * self.logits(x, name) + w.shift)

    def reasons(self, candidate: Candidate, x_row: sp.csr_matrix, name: str, limit: int = 3) -> tuple[str, ...]:
        """The features that raised the candidate's score most, in words: `cue.remediation`, `heading: timeline`."""
        vector = self._vector(name)
        row = x_row.tocoo()
        words = tokens(candidate)
        by_slot = dict(zip(slots(words), words, strict=True))
        found: list[tuple[float, str]] = []
        for column, value in zip(row.col, row.data, strict=True):
            gain = float(value * vector[column])
            if gain <= 0:
                continue
            if column >= HASHED:
                found.append((gain, NAMED[column - HASHED]))
            elif column in by_slot:
                token = by_slot[column]
                found.append((gain, f"heading word “{token[2:]}”" if token.startswith("h:") else f"words “{token}”"))
        return tuple(label for _, label in sorted(found, reverse=True)[:limit])

    def to_json(self) -> str:
        fields = {name: w for name, w in self.weights.items()}
        file = _File(
            format=FORMAT, name=self.name, hashed=HASHED, trained=self.trained, fields=fields, figures=self.figures
        )
        return json.dumps(file.model_dump(mode="json"), indent=None, separators=(",", ":"), sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> FinderModel:
        """A model from its file; ValueError (one line) for a file that is not one of this version's."""
        try:
            file = _File.model_validate_json(text)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "-"
            raise ValueError(f"not a finder model: {where}: {error['msg']}") from None
        if file.hashed != HASHED:
            raise ValueError(f"not a finder model of this version: {file.hashed} hashed slots, this one has {HASHED}")
        return cls(file.name, dict(file.fields), file.trained, file.figures)


_VECTORS: dict[tuple[int, str], np.ndarray] = {}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def _labelled(docs: Sequence[Document], name: str) -> list[Document]:
    return [d for d in docs if name in d.passages and d.candidates]


def _fit_field(docs: Sequence[Document], name: str, c: float, prior: FinderModel | None) -> _Weights | None:
    """The field's weights (uncalibrated) from the documents labelled for it; None without a positive."""
    docs = _labelled(docs, name)
    if not docs:
        return None
    x = sp.vstack([d.x for d in docs]).tocsr()
    y = np.concatenate([d.labels(name) for d in docs])
    if y.sum() == 0 or y.all():
        return None
    with_prior = prior is not None and name in prior.weights
    if with_prior:
        # The prior's own score as one more feature: with few reviews the model leans on the prior; the
        # words and features it learns correct it. Both are linear, so they fold into one weight vector.
        assert prior is not None
        x = sp.hstack([x, sp.csr_matrix(prior.logits(x, name).reshape(-1, 1))]).tocsr()
    # Only the columns some training row holds: an L2-penalised weight of a column that is zero in every
    # row is zero, so leaving them out gives the same model, about ten times faster (32,000 slots, a few
    # thousand used).
    used = np.unique(x.indices)
    model = LogisticRegression(C=c, max_iter=2000, random_state=0)
    model.fit(x[:, used], y)
    coef = np.zeros(x.shape[1])
    coef[used] = model.coef_.ravel()
    intercept = float(model.intercept_[0])
    if with_prior:
        assert prior is not None
        lean = coef[-1]
        coef = coef[:-1] + lean * prior._vector(name)
        intercept += lean * prior.weights[name].intercept
    # Words that weigh next to nothing are left out: the file stays small (a few hundred kilobytes)
    # and the scores move by less than the rounding of a confidence.
    hashed = {int(i): round(float(coef[i]), 4) for i in np.flatnonzero(np.abs(coef[:HASHED]) >= _NEGLIGIBLE)}
    named = {feature: round(float(coef[HASHED + n]), 5) for n, feature in enumerate(NAMED) if coef[HASHED + n]}
    return _Weights(intercept=round(intercept, 5), hashed=hashed, named=named)


class _Grouped(Protocol):
    @property
    def group(self) -> str: ...


G = TypeVar("G", bound=_Grouped)


def publisher_folds(docs: Sequence[G], folds: int) -> list[tuple[list[G], list[G]]]:
    """(train, test) splits that never split a publisher: whole groups held out, the largest spread first."""
    sizes: dict[str, int] = {}
    for d in docs:
        sizes[d.group] = sizes.get(d.group, 0) + 1
    count = min(folds, len(sizes))
    if count < 2:
        return []
    bins: list[set[str]] = [set() for _ in range(count)]
    load = [0] * count
    for group in sorted(sizes, key=lambda g: (-sizes[g], g)):
        k = load.index(min(load))
        bins[k].add(group)
        load[k] += sizes[group]
    return [([d for d in docs if d.group not in b], [d for d in docs if d.group in b]) for b in bins]


def _platt(logits: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if len(y) == 0 or y.all() or not y.any():
        return 1.0, 0.0
    model = LogisticRegression(C=1e4, max_iter=1000)
    model.fit(logits.reshape(-1, 1), y)
    scale = float(model.coef_[0, 0])
    if scale <= 0:  # held-out scores that do not rise with the label: no calibration, rather than a reversed one
        return 1.0, 0.0
    return round(scale, 5), round(float(model.intercept_[0]), 5)


def fit(
    docs: Sequence[Document],
    *,
    name: str,
    c: float = C,
    prior: FinderModel | None = None,
    write: Callable[[str], bool] = lambda _: False,
) -> FinderModel:
    """A model trained on `docs` (with `prior`'s scores as a feature, when given), each field's
    confidence calibrated on out-of-fold scores of the same documents, grouped by publisher; `write`
    says which fields it writes, not only offers. What it was trained from is the caller's to record
    (`FinderModel.trained`)."""
    weights: dict[str, _Weights] = {}
    for field_name in FIELDS:
        found = _fit_field(docs, field_name, c, prior)
        if found is None:
            continue
        held: list[np.ndarray] = []
        labels: list[np.ndarray] = []
        for train, test in publisher_folds(_labelled(docs, field_name), _CALIBRATION_FOLDS):
            inner = _fit_field(train, field_name, c, prior)
            if inner is None:
                continue
            part = FinderModel("fold", {field_name: inner}, {}, {})
            for d in test:
                # Calibrated where it is read: on each document's best few, the ones a writer is shown.
                logits = part.logits(d.x, field_name)
                top = np.argsort(-logits, kind="stable")[:_CALIBRATED_TOP]
                held.append(logits[top])
                labels.append(d.labels(field_name)[top])
            _VECTORS.pop((id(part), field_name), None)
        if held:
            scale, shift = _platt(np.concatenate(held), np.concatenate(labels))
        else:  # one publisher only: no held-out scores to calibrate on; the prior's calibration, if any
            p = prior.weights.get(field_name) if prior else None
            scale, shift = (p.scale, p.shift) if p else (1.0, 0.0)
        weights[field_name] = found.model_copy(update={"scale": scale, "shift": shift, "write": write(field_name)})
    return FinderModel(name, weights, {}, {})


def written(scores: np.ndarray, name: str, threshold: float) -> list[int]:
    """The candidates a field is written from: those at or above the threshold, best first, at most its limit."""
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] >= threshold]
    return order[: WRITE_LIMIT[name]]


@dataclass
class FieldFigures:
    """A field's figures on held-out documents."""

    hit1: list[bool] = field(default_factory=list)
    hit3: list[bool] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    false_fills: list[bool] = field(default_factory=list)
    top_p: list[float] = field(default_factory=list)
    top_y: list[bool] = field(default_factory=list)

    def add(self, doc: Document, name: str, scores: np.ndarray, threshold: float) -> None:
        chosen = doc.passages.get(name) or []
        labels = doc.labels(name)
        order = np.argsort(-scores, kind="stable")
        for i in order[:3]:
            self.top_p.append(float(scores[i]))
            self.top_y.append(bool(labels[i]))
        text = "\n".join(doc.candidates[i].text for i in sorted(written(scores, name, threshold)))
        if chosen:
            self.hit1.append(bool(labels[order[:1]].any()))
            self.hit3.append(bool(labels[order[:3]].any()))
            self.recall.append(sum(contains(text, p) for p in chosen) / len(chosen) if text else 0.0)
            if text:
                self.precision.append(covered_share(text, chosen))
        else:
            self.false_fills.append(bool(text))

    def summary(self) -> dict[str, Any]:
        def mean(values: Sequence[float | bool]) -> float | None:
            return round(float(np.mean(values)), 3) if len(values) else None

        return {
            "documents": len(self.hit1),
            "without": len(self.false_fills),
            "hit1": mean(self.hit1),
            "hit3": mean(self.hit3),
            "precision": mean(self.precision),
            "recall": mean(self.recall),
            "false_fills": mean(self.false_fills),
            "calibration_error": calibration_error(self.top_p, self.top_y),
        }


def calibration_error(p: Sequence[float], y: Sequence[bool], bins: int = 10) -> float | None:
    """Expected calibration error: over equal-width bins of confidence, the gap between the mean
    confidence and the share right, weighted by the bin's share of the points."""
    if not p:
        return None
    pa, ya = np.asarray(p), np.asarray(y, dtype=float)
    edges = np.minimum((pa * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        mask = edges == b
        if mask.any():
            total += mask.mean() * abs(pa[mask].mean() - ya[mask].mean())
    return round(total, 3)


def cross_validate(
    docs: Sequence[Document],
    *,
    threshold: float,
    c: float = C,
    prior: FinderModel | None = None,
    folds: int = _FOLDS,
    baseline: FinderModel | None = None,
    fields: Sequence[str] = FIELDS,
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]] | None]:
    """Figures per field on held-out publishers: of a model trained on the other folds (with `prior`),
    and of `baseline` (a model in use) on the same held-out documents."""
    mine = {name: FieldFigures() for name in fields}
    theirs = {name: FieldFigures() for name in fields}
    for train, test in publisher_folds(docs, folds):
        model = fit(train, name="fold", c=c, prior=prior)
        for name in fields:
            for doc in _labelled(test, name):
                if name in model.weights:
                    mine[name].add(doc, name, model.score(doc.x, name), threshold)
                if baseline is not None and name in baseline.weights:
                    theirs[name].add(doc, name, baseline.score(doc.x, name), threshold)
        for name in model.weights:
            _VECTORS.pop((id(model), name), None)
    return (
        {name: f.summary() for name, f in mine.items()},
        {name: f.summary() for name, f in theirs.items()} if baseline is not None else None,
    )


def sure_enough(figures: dict[str, Any], precision: float = 0.65, recall: float = 0.30, false: float = 0.20) -> bool:
    """Held-out figures good enough for the finder to write a field, not only offer it: written precision,
    recall and false fills at the targets, each measured on enough documents (a false-fill share of
    three documents says little)."""
    p, r, f = figures.get("precision"), figures.get("recall"), figures.get("false_fills")
    enough = figures.get("documents", 0) >= _MEASURED_ON and figures.get("without", 0) >= _MEASURED_ON
    return (
        enough and p is not None and r is not None and f is not None and p >= precision and r >= recall and f <= false
    )
