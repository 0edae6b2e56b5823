"""Learning from reviews: the finder retrained from the library's own published cases.

    report = learn(store, settings)          # trains, compares on held-out publishers, keeps it or refuses
    finder = finder_in_use(store, settings)  # what the crawl drafts with

What a reviewed case teaches: for each passage field, the sentences, items and rows of its draft's
text that the published field holds (a writer chose them, took them from a suggestion or kept what
the drafter wrote) are right for that field, every other one of that document is not, and a passage
a writer dismissed (`incidentlib dismiss-suggestion`) is wrong for its field even where the field's
words overlap it. A field left empty in a published case counts as "this document states none".

The packaged model (trained on a corpus of public postmortems) is the prior: its score is a feature
of the new model, so with few reviews it leans on the prior and with more it corrects it. Before the
new model replaces the one in use, both are scored on the same held-out folds of the library (whole
publishers held out); a model that ranks worse (mean hit@3), writes less precisely or is calibrated
worse is refused, and the one in use stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import StoreError
from pipeline.evidence import field_parts
from pipeline.finder import Finder, load
from pipeline.finder.candidates import candidates
from pipeline.finder.labels import covered_share, publisher
from pipeline.finder.model import FIELDS, Document, FinderModel, cross_validate, fit, sure_enough
from pipeline.models import Case, Draft, utc_now
from pipeline.settings import Settings
from pipeline.store import Store

__all__ = ["LearnReport", "finder_in_use", "learn", "library_documents"]

_LOADED: dict[tuple[str, int, int], Finder] = {}
MIN_DOCUMENTS = 10
MIN_PUBLISHERS = 2
# How much worse the new model may be on one figure before it is refused (noise on a few dozen documents).
_SLACK = {"hit3": 0.0, "precision": 0.02, "calibration_error": 0.02}


def finder_in_use(store: Store, settings: Settings) -> Finder | None:
    """The finder the crawl drafts with: the library's own model once `learn` kept one, the packaged one
    until then; None with `draft_finder` off. A model file that cannot be read is a StoreError naming it."""
    if not settings.draft_finder:
        return None
    path = store.state.path("finder.json")
    try:
        seen = path.stat()
    except FileNotFoundError:
        return load()
    except OSError:
        seen = None
    key = (str(path), seen.st_mtime_ns, seen.st_size) if seen is not None else None
    if key is not None and key in _LOADED:
        return _LOADED[key]
    text = store.state.finder_model()
    if text is None:
        return load()
    try:
        finder = Finder(FinderModel.from_json(text))
    except ValueError as exc:
        label = store.label(store.state.path("finder.json"))
        raise StoreError(
            f"{label}: {exc}; run `incidentlib learn` again, or move it away to draft with the packaged model",
            path=label,
        ) from None
    if key is not None:
        _LOADED.clear()  # the model in use, once: a crawl asks for it for every source
        _LOADED[key] = finder
    return finder


def _texts(value: Any) -> list[str]:
    """The English passages a case field holds: a text's paragraphs, an impact's scope, each step's text."""
    if value is None:
        return []
    if isinstance(value, list):
        return [t for item in value for t in _texts(item.get("text") if isinstance(item, dict) else item)]
    if isinstance(value, dict):
        text = value.get("en") or value.get("scope")
        return [p.strip() for p in str(text or "").split("\n\n") if p.strip() and p.strip() != "unknown"]
    return []


def _chosen(case: Case, draft: Draft, name: str) -> list[str]:
    """The passages the published case holds for a field; for the root cause (a class) the passages its
    draft kept as the root cause's evidence."""
    if name == "root_cause":
        return [
            e.quote for e in draft.evidence if field_parts(e.field)[0] == name and not e.rule.startswith("vocabulary.")
        ]
    return _texts(case.model_dump(mode="json").get(name))


def library_documents(store: Store) -> list[Document]:
    """Each published case whose draft keeps the text it was written from, labelled for every passage field."""
    found: list[Document] = []
    for case in store.cases():
        if case.withdrawn is not None:
            continue
        drafts = [d for d in store.drafts_of_case(case.id) if d.text]
        if not drafts:
            continue
        draft = drafts[0]
        passages = {name: _chosen(case, draft, name) for name in FIELDS}
        document = Document(
            case.id, publisher(draft.origin.url, case.org_slug), candidates(draft.text, draft.sections), passages
        )
        for dismissed in draft.dismissed_passages:
            name = str(field_parts(dismissed.field)[0])
            if name in passages:
                labels = document.labels(name)
                for i, c in enumerate(document.candidates):
                    if labels[i] and covered_share(c.text, [dismissed.quote]) >= 0.5:
                        labels[i] = False  # a writer said no to this passage for this field
        if document.candidates:
            found.append(document)
    return found


@dataclass
class LearnReport:
    """What `learn` measured and decided: per field the new model's and the model in use's figures on
    the same held-out folds, and why it kept or refused the new one."""

    documents: int
    publishers: int
    in_use: str
    new: str | None = None
    kept: bool = False
    reasons: list[str] = field(default_factory=list)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    baseline: dict[str, dict[str, Any]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """What a run of the learn flow keeps in the runs file."""
        return {"documents": self.documents, "kept": int(self.kept), "refused": int(not self.kept)}

    def as_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "publishers": self.publishers,
            "in_use": self.in_use,
            "new": self.new,
            "kept": self.kept,
            "reasons": self.reasons,
            "figures": self.figures,
            "baseline": self.baseline,
        }


def _mean(figures: dict[str, dict[str, Any]], key: str, names: list[str]) -> float | None:
    values = [figures[n][key] for n in names if figures.get(n, {}).get(key) is not None]
    return round(sum(values) / len(values), 3) if values else None


def _worse(new: dict[str, dict[str, Any]], old: dict[str, dict[str, Any]]) -> list[str]:
    """Why the new model is worse than the old on the same folds (empty: it is not)."""
    names = [n for n in FIELDS if new.get(n, {}).get("documents") and old.get(n, {}).get("documents")]
    found: list[str] = []
    a, b = _mean(new, "hit3", names), _mean(old, "hit3", names)
    if a is not None and b is not None and a < b - _SLACK["hit3"]:
        found.append(f"it ranks worse: mean hit@3 {a} against {b}")
    for name in names:
        p, q = new[name].get("precision"), old[name].get("precision")
        if p is not None and q is not None and p < q - _SLACK["precision"]:
            found.append(f"{name}: it writes less precisely ({p} against {q})")
        e, f = new[name].get("calibration_error"), old[name].get("calibration_error")
        if e is not None and f is not None and e > f + _SLACK["calibration_error"]:
            found.append(f"{name}: its confidence is calibrated worse (error {e} against {f})")
    return found


def learn(store: Store, settings: Settings, *, dry_run: bool = False) -> LearnReport:
    """Retrain the finder from the library's published cases, with the packaged model as the prior; keep
    it (`.incidentlib/finder.json`) only when it is no worse than the model in use on held-out publishers.
    With `dry_run`, measure and decide but keep nothing."""
    docs = library_documents(store)
    publishers = len({d.group for d in docs})
    current = finder_in_use(store, settings.model_copy(update={"draft_finder": True}))
    assert current is not None
    report = LearnReport(len(docs), publishers, current.name)
    if len(docs) < MIN_DOCUMENTS or publishers < MIN_PUBLISHERS:
        report.reasons.append(
            f"too few reviewed cases to learn from: {len(docs)} published cases with their text, from "
            f"{publishers} publishers; learning needs {MIN_DOCUMENTS} from {MIN_PUBLISHERS} or more"
        )
        return report
    prior = load().model
    threshold = settings.draft_confidence_threshold
    mine, theirs = cross_validate(docs, threshold=threshold, prior=prior, baseline=current.model)
    report.figures = {n: f for n, f in mine.items() if f["documents"] or f["without"]}
    report.baseline = {n: f for n, f in (theirs or {}).items() if f["documents"] or f["without"]}
    report.reasons = _worse(report.figures, report.baseline)
    if report.reasons:
        return report
    name = f"library-{utc_now().strftime('%Y%m%dT%H%M%SZ')}"
    model = fit(docs, name=name, prior=prior, write=lambda n: sure_enough(report.figures.get(n, {})))
    trained = {"documents": len(docs), "publishers": publishers, "from": "library", "prior": prior.name}
    model = FinderModel(model.name, model.weights, trained, report.figures)
    report.new, report.kept = name, not dry_run
    report.reasons.append("no worse than the model in use on held-out publishers")
    if not dry_run:
        store.state.keep_finder_model(model.to_json())
    return report
