"""How close the drafts come to what a careful writer would put in each field, against an answer key.

    python bench/drafts.py [../shared/corpus/postmortems] [--details details.jsonl] [--no-finder] [--curve]
    python bench/drafts.py --train pipeline/finder/default.json --name corpus-YYYY.MM.DD

The folder holds `index.json` (one entry per document: `file`, `source_url`, `kind`) and
`fields.json` (the answer key, one entry per `file`). Each document is drafted as the
crawl drafts it (`extract` on its bytes read as if fetched from its public URL, then
`new_draft` + `apply_extraction`), without the registry's org hint: the figures measure
what the text and the URL give. A document that cannot be read counts in `failures` and is
scored as the blank draft the crawl would keep. Prints one JSON line:

- `org_right`: share of documents whose drafted `org_slug` is one of the key's `org_slug_ok`.
- `durations_equal`: of the (document, detected_after | resolved_after) pairs where the key
  has a duration, the share whose drafted duration is exactly that duration.
- `durations_false`: of the pairs where the key has none, the share the draft fills.
- `severity_filled`: of the documents that state a severity (`severity_stated`), the share
  whose draft severity is not "unknown"; `severity_false`: the same among the others.
- `passage_recall_<field>` for trigger, detection, impact, root_cause, remediation: for each
  document where the key has the field, the share of its key passages (the one string; for
  remediation each item) whose words, case-folded, appear contiguously and in order among
  the words of the drafted field; averaged over those documents. `passage_recall` is the
  mean of the five. `passage_word_recall` is the lenient reading: the share of a passage's
  words found anywhere in the field (bag of words), same averaging.
- `passage_precision_<field>`: for each document where both the key and the draft have the
  field, the share of the drafted field's words that belong to one of the key's passages for
  that field: a drafted word belongs when it lies in a run of at least three words (or the
  whole passage, when shorter) that the drafted text and a key passage share, in order
  (`difflib`'s matching blocks over case-folded words); averaged over those documents.
  `passage_precision` is the mean of the five. A drafted field the key has no passage for is
  not scored here but in `false_fills`.
- `false_fills_<field>`: of the documents where the key has no passage for the field (null or
  empty), the share whose draft fills it. `false_fills` pools the (document, field) pairs of
  the five fields.
- `symptoms_drafted`: share of documents whose draft has a `symptoms_text`.
- `action_links`: of the key's action items that end in a link `(URL)`, the share for which
  the drafted action item holding the item's text also holds the URL.
  `action_links_anywhere`: the URL anywhere among the drafted action items.
  `action_items_recall`: share of all key action items whose text (link left out) is in
  one drafted action item.
- `summary_facts`: of all the key's `summary_must_mention` facts, pooled, the share present
  in the drafted summary: at least 60 % of a fact's content words (stop words dropped,
  plural and -ed/-ing endings stemmed) occur among the summary's words.
- `summary_clean`: share of documents whose summary exists, has at most 120 words, holds
  none of the key's `summary_must_not` strings (case-insensitive) and no line that is a
  byline, a status label or a code/log line.
- `ai_tags_false`: of the documents the key says are not about ML training or inference,
  the share whose draft carries a term that only ML training suggests (ML_ONLY below).
- `incidents_split`: of the documents the key says tell several incidents (a logbook, a monthly
  report), the share whose draft is split into several (`Draft.incidents` holds two or more);
  `incidents_exact`: the share split into exactly the key's number of incidents.
  `single_split`: of the documents telling one incident, the share whose draft is split all the
  same (must be 0).
- `hit1`, `hit3` (and `_<field>` for the prose fields and the action items): of the fields the key has,
  the share whose first passage (hit@1), or one of the first three (hit@3), is right (`covered_share` of
  .5 or more with a key passage; `pipeline.finder.labels`): the written passages (evidence) first, then
  the suggestions in their order. Each document is drafted with a finder trained on the other publishers'
  documents only (five folds, whole publishers held out); `rules_hit1`, `rules_hit3` the same drafts
  with the rules alone. `--no-finder` drafts with the rules alone and leaves these out.
- `finder_<figure>_<field>`: the finder alone on held-out publishers: hit@1, hit@3, written precision,
  recall and false fills at the threshold, and `calibration_error` (of the confidence of each document's
  top three candidates, ten bins); `finder_calibration_error` is the largest.
- `learning_curve` (with `--curve`): the finder's hit@1 and hit@3 trained on 5, 10, 15 documents of the
  other publishers (three draws), every document held out at every size.
- `--train MODEL` trains the packaged finder on every document and writes it, each field allowed to
  write only where its held-out figures clear the targets (`finder.model.sure_enough`).
- `seconds`: wall time of reading, drafting and scoring every document.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from pipeline.draft import DraftRules, apply_extraction, new_draft
from pipeline.errors import ExtractError
from pipeline.extract import extract
from pipeline.finder import Finder
from pipeline.finder.candidates import candidates, words
from pipeline.finder.labels import contains, covered_share, publisher, word_recall
from pipeline.finder.model import Document as Labelled
from pipeline.finder.model import FinderModel, cross_validate, fit, publisher_folds, sure_enough
from pipeline.ids import canonical_url
from pipeline.models import Draft, Origin, SectionField, SourceEntry
from pipeline.settings import Settings

PROSE_FIELDS = ("trigger", "detection", "impact", "root_cause", "remediation")
DURATION_FIELDS = ("detected_after", "resolved_after")
DEFAULT_FOLDER = Path("../shared/corpus/postmortems")
# The passage fields the key holds, ranked by hit@k: the prose fields and the action items.
RANKED_FIELDS = (*PROSE_FIELDS, "action_items")
# Training sizes of the learning curve: every document is held out with its publisher at each size, so
# the figures are comparable; the corpus's biggest publisher (18 of 34) leaves 16 others, hence 15.
CURVE = (5, 10, 15)
CURVE_SEEDS = (0, 1, 2)
FOLDS = 5
SUMMARY_WORDS = 120
FACT_SHARE = 0.6
# Terms of the vocabularies that only a text about ML training or inference should suggest. Kept apart
# from pipeline.extract.tags.ML_ONLY on purpose: the figure must not move when the code's list does.
ML_ONLY: dict[str, frozenset[str]] = {
    "domain": frozenset({"ai-infra"}),
    "components": frozenset(
        {
            "nccl",
            "pytorch",
            "deepspeed",
            "megatron",
            "cuda",
            "gpu-hardware",
            "gpu-driver",
            "interconnect",
            "slurm",
            "checkpointing",
            "dataloader",
        }
    ),
    "symptoms": frozenset(
        {
            "training-job-failed",
            "training-hang",
            "nccl-timeout",
            "gpu-unavailable",
            "loss-spike",
            "slow-training",
            "checkpoint-corrupted",
        }
    ),
}
_STOP = frozenset(
    "a an the of to in on at by for from with and or but is are was were be been being it its this that "
    "these those as into onto up down out after before over under not no".split()
)
_LINK = re.compile(r"\((https?://[^\s)]+)\)")
_ISO_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
# Lines a clean summary never holds: a byline or dateline, a status label, code or a log line.
_NOISE_LINE = re.compile(
    r"^(?:(?:written|posted|published|updated|authored)\s+(?:by|on)\b"
    r"|(?:investigating|identified|monitoring|resolved|update|postmortem|completed|scheduled)\s*:?$"
    r"|```|\[[A-Z] \d{4}-\d\d-\d\d|\s*(?:iteration|error|warning|traceback)\b.*[|:].*\d)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Document:
    file: str
    url: str
    kind: str | None
    body: bytes
    key: dict[str, Any]
    group: str = ""  # the publisher: folds never split one


# ---------------------------------------------------------------- corpus and drafts


def documents(folder: Path) -> Iterator[Document]:
    """The index's documents that the key covers, in the index's order."""
    key = json.loads((folder / "fields.json").read_text(encoding="utf-8"))
    for item in json.loads((folder / "index.json").read_text(encoding="utf-8")):
        if item["file"] in key:
            body = (folder / item["file"]).read_bytes()
            group = publisher(item["source_url"], item.get("org_slug"))
            yield Document(item["file"], item["source_url"], item.get("kind"), body, key[item["file"]], group)


def draft_for(document: Document, finder: Finder | None = None) -> tuple[Draft, str | None]:
    """The draft a first crawl of the document would write (served raw: the URL tells the format),
    and why it could not be read: then the draft is the blank one the crawl would keep, scored as is."""
    entry = SourceEntry(url=document.url, kind=document.kind)
    draft = new_draft(entry)
    try:
        extraction = extract(document.body, document.url, None)
    except ExtractError as exc:
        return draft, str(exc)
    origin = Origin(
        url=document.url, canonical_url=canonical_url(document.url), final_url=document.url, format=extraction.format
    )
    return apply_extraction(draft, entry, extraction, origin, DraftRules(finder=finder)), None


# ---------------------------------------------------------------- text helpers


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def fact_present(summary: str, fact: str) -> bool:
    content = [_stem(w) for w in words(fact) if w not in _STOP] or [_stem(w) for w in words(fact)]
    have = {_stem(w) for w in words(summary)}
    return bool(content) and sum(w in have for w in content) / len(content) >= FACT_SHARE


def parse_duration(value: str | None) -> timedelta | None:
    """An ISO 8601 duration as the key writes it (PT1H50M, P1DT43M)."""
    match = _ISO_DURATION.match(value or "")
    if not value or not match:
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def format_duration(value: timedelta | None) -> str | None:
    """A duration as ISO 8601, as the key and the draft's JSON write it."""
    if value is None:
        return None
    minutes, seconds = divmod(round(value.total_seconds()), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    time = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M"), (seconds, "S")) if n)
    return f"P{f'{days}D' if days else ''}{'T' + time if time else ''}" if days or time else "PT0S"


def share(hits: Iterable[bool | float]) -> float | None:
    values = [float(h) for h in hits]
    return round(statistics.fmean(values), 3) if values else None


# ---------------------------------------------------------------- what the draft holds


def _en(texts: dict[str, str] | None) -> str:
    return (texts or {}).get("en", "")


def root_cause_text(draft: Draft) -> str:
    """The drafted root-cause narrative. A draft holds only the root cause's class; the passages
    behind it are its evidence (the section under its heading, or cue sentences). A draft with no
    class drafted has none: then the sections mapped to the root cause, as before evidence."""
    # The class's own words (`vocabulary.` rules) are no narrative: only the passages are.
    quotes = [e.quote for e in draft.evidence if e.field == "root_cause" and not e.rule.startswith("vocabulary.")]
    return "\n\n".join(quotes) or "\n\n".join(s.text for s in draft.sections if s.field == SectionField.ROOT_CAUSE)


def drafted_prose(draft: Draft) -> dict[str, str]:
    impact = [v for v in (draft.impact.scope, draft.impact.users, draft.impact.region) if v and v != "unknown"]
    return {
        "trigger": _en(draft.trigger),
        "detection": _en(draft.detection),
        "impact": "\n".join(impact),
        "root_cause": root_cause_text(draft),
        "remediation": "\n".join(_en(a.text) for a in draft.remediation),
    }


def key_passages(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [v for v in value if v]


# ---------------------------------------------------------------- per-document scores


def org_right(draft: Draft, key: dict[str, Any]) -> bool:
    return draft.org_slug in key["org_slug_ok"]


def duration_pairs(draft: Draft, key: dict[str, Any]) -> list[tuple[str, timedelta | None, timedelta | None]]:
    """(field, key's duration, draft's duration) for both durations."""
    return [(name, parse_duration(key[name]), getattr(draft.timeline, name)) for name in DURATION_FIELDS]


def passage_scores(draft: Draft, key: dict[str, Any], measure: Callable[[str, str], float]) -> dict[str, float]:
    """Per prose field the key fills: the mean over its passages of `measure(drafted, passage)`."""
    drafted = drafted_prose(draft)
    scores: dict[str, float] = {}
    for name in PROSE_FIELDS:
        passages = key_passages(key[name])
        if passages:
            scores[name] = statistics.fmean(float(measure(drafted[name], p)) for p in passages)
    return scores


def precision_scores(draft: Draft, key: dict[str, Any]) -> tuple[dict[str, float], dict[str, bool]]:
    """Per prose field: the drafted words' share in the key's passages where both have the field, and
    whether the draft fills a field the key has no passage for."""
    drafted = drafted_prose(draft)
    precision: dict[str, float] = {}
    false_fill: dict[str, bool] = {}
    for name in PROSE_FIELDS:
        passages = key_passages(key[name])
        filled = bool(words(drafted[name]))
        if not passages:
            false_fill[name] = filled
        elif filled:
            precision[name] = covered_share(drafted[name], passages)
    return precision, false_fill


def action_link_scores(draft: Draft, key: dict[str, Any]) -> tuple[list[bool], list[bool], list[bool]]:
    """Per key action item with a link: kept on its own item, kept anywhere; per key item: its text found."""
    drafted = [_en(a.text) for a in draft.action_items]
    on_item: list[bool] = []
    anywhere: list[bool] = []
    found: list[bool] = []
    for item in key["action_items"]:
        urls = _LINK.findall(item)
        text = _LINK.sub("", item).strip()
        holders = [d for d in drafted if contains(d, text)]
        found.append(bool(holders))
        for url in urls:
            on_item.append(any(url in d for d in holders))
            anywhere.append(any(url in d for d in drafted))
    return on_item, anywhere, found


def summary_clean(summary: str, key: dict[str, Any]) -> bool:
    if not summary.strip() or len(summary.split()) > SUMMARY_WORDS:
        return False
    folded = summary.casefold()
    if any(bad.casefold() in folded for bad in key["summary_must_not"]):
        return False
    return not any(_NOISE_LINE.match(line.strip()) for line in summary.splitlines() if line.strip())


def ml_only_terms(draft: Draft) -> list[str]:
    return sorted(term for kind, terms in ML_ONLY.items() for term in getattr(draft, kind) if term in terms)


# ---------------------------------------------------------------- the figures


@dataclass
class Tally:
    """Per-document results, gathered for the figures."""

    org: list[bool]
    equal: list[bool]
    false_fill: list[bool]
    severity_filled: list[bool]
    severity_false: list[bool]
    recall: dict[str, list[float]]
    word_recall: dict[str, list[float]]
    links_on_item: list[bool]
    links_anywhere: list[bool]
    actions_found: list[bool]
    facts: list[bool]
    clean: list[bool]
    ai_false: list[bool]
    precision: dict[str, list[float]] = field(default_factory=lambda: {f: [] for f in PROSE_FIELDS})
    false_fills: dict[str, list[bool]] = field(default_factory=lambda: {f: [] for f in PROSE_FIELDS})
    symptoms: list[bool] = field(default_factory=list)
    incidents_split: list[bool] = field(default_factory=list)  # of documents telling several
    incidents_exact: list[bool] = field(default_factory=list)  # of documents telling several
    single_split: list[bool] = field(default_factory=list)  # of documents telling one

    @classmethod
    def empty(cls) -> Tally:
        return cls(
            [], [], [], [], [], {f: [] for f in PROSE_FIELDS}, {f: [] for f in PROSE_FIELDS}, [], [], [], [], [], []
        )


def score(draft: Draft, key: dict[str, Any], tally: Tally) -> dict[str, Any]:
    """Add one document's results to the tally; return them for --details."""
    tally.org.append(org_right(draft, key))
    pairs = duration_pairs(draft, key)
    for _, want, got in pairs:
        if want is not None:
            tally.equal.append(got == want)
        else:
            tally.false_fill.append(got is not None)
    if key["severity_stated"]:
        tally.severity_filled.append(draft.severity != "unknown")
    else:
        tally.severity_false.append(draft.severity != "unknown")
    recall = passage_scores(draft, key, contains)
    for name, value in recall.items():
        tally.recall[name].append(value)
    for name, value in passage_scores(draft, key, word_recall).items():
        tally.word_recall[name].append(value)
    precision, false_fill = precision_scores(draft, key)
    for name, value in precision.items():
        tally.precision[name].append(value)
    for name, filled in false_fill.items():
        tally.false_fills[name].append(filled)
    symptoms = bool(_en(draft.symptoms_text).strip())
    tally.symptoms.append(symptoms)
    on_item, anywhere, found = action_link_scores(draft, key)
    tally.links_on_item += on_item
    tally.links_anywhere += anywhere
    tally.actions_found += found
    summary = _en(draft.summary)
    facts = [fact_present(summary, fact) for fact in key["summary_must_mention"]]
    tally.facts += facts
    clean = summary_clean(summary, key)
    tally.clean.append(clean)
    told, split = key.get("incidents", 1), len(draft.incidents)
    if told > 1:
        tally.incidents_split.append(split > 1)
        tally.incidents_exact.append(split == told)
    else:
        tally.single_split.append(split > 1)
    ml_terms = ml_only_terms(draft)
    if not key["ai_training"]:
        tally.ai_false.append(bool(ml_terms))
    return {
        "org_slug": draft.org_slug,
        "durations": {name: [format_duration(want), format_duration(got)] for name, want, got in pairs},
        "severity": draft.severity,
        "recall": {name: round(value, 3) for name, value in recall.items()},
        "precision": {name: round(value, 3) for name, value in precision.items()},
        "false_fills": sorted(name for name, filled in false_fill.items() if filled),
        "symptoms_drafted": symptoms,
        "action_links": [sum(on_item), len(on_item)],
        "summary_words": len(summary.split()),
        "summary_facts": [sum(facts), len(facts)],
        "summary_clean": clean,
        "symptoms_words": len(_en(draft.symptoms_text).split()),
        "ml_only_terms": ml_terms,
        "incidents": [split, told],
    }


def figures(tally: Tally, documents_scored: int, failures: int) -> dict[str, Any]:
    recall = {name: share(values) for name, values in tally.recall.items()}
    word = {name: share(values) for name, values in tally.word_recall.items()}
    present = [v for v in recall.values() if v is not None]
    present_word = [v for v in word.values() if v is not None]
    precision = {name: share(values) for name, values in tally.precision.items()}
    present_precision = [v for v in precision.values() if v is not None]
    false_fills = {name: share(values) for name, values in tally.false_fills.items()}
    return {
        "documents": documents_scored,
        "failures": failures,
        "org_right": share(tally.org),
        "durations_equal": share(tally.equal),
        "durations_false": share(tally.false_fill),
        "severity_filled": share(tally.severity_filled),
        "severity_false": share(tally.severity_false),
        "passage_recall": round(statistics.fmean(present), 3) if present else None,
        **{f"passage_recall_{name}": value for name, value in recall.items()},
        "passage_word_recall": round(statistics.fmean(present_word), 3) if present_word else None,
        "passage_precision": round(statistics.fmean(present_precision), 3) if present_precision else None,
        **{f"passage_precision_{name}": value for name, value in precision.items()},
        "false_fills": share(filled for values in tally.false_fills.values() for filled in values),
        **{f"false_fills_{name}": value for name, value in false_fills.items()},
        "symptoms_drafted": share(tally.symptoms),
        "action_links": share(tally.links_on_item),
        "action_links_anywhere": share(tally.links_anywhere),
        "action_items_recall": share(tally.actions_found),
        "summary_facts": share(tally.facts),
        "summary_clean": share(tally.clean),
        "ai_tags_false": share(tally.ai_false),
        "incidents_split": share(tally.incidents_split),
        "incidents_exact": share(tally.incidents_exact),
        "single_split": share(tally.single_split),
    }


# ---------------------------------------------------------------- the finder: ranked passages, held out


def labelled(document: Document) -> Labelled | None:
    """The document as the finder learns from it: its candidates and the key's passages per field."""
    try:
        extraction = extract(document.body, document.url, None)
    except ExtractError:
        return None
    passages = {name: key_passages(document.key.get(name)) for name in RANKED_FIELDS}
    return Labelled(document.file, document.group, candidates(extraction.text, extraction.sections), passages)


def ranked_passages(draft: Draft, name: str) -> list[str]:
    """A field's passages as a writer meets them: the written ones (its evidence, a term's words left
    out), then its suggestions, best first."""

    def root(path: str) -> str:
        return path.split(".")[0].split("[")[0]

    written = [e.quote for e in draft.evidence if root(e.field) == name and not e.rule.startswith("vocabulary.")]
    if not written and name == "action_items":
        written = [_en(a.text) for a in draft.action_items]
    offered = [e.quote for e in draft.suggestions if root(e.field) == name and not e.rule.startswith("vocabulary.")]
    return written + offered


def hit_scores(draft: Draft, key: dict[str, Any], hits: dict[str, dict[int, list[bool]]]) -> None:
    """For each ranked field the key has: is a right passage first (hit@1), among the first three (hit@3)?"""
    for name in RANKED_FIELDS:
        passages = key_passages(key.get(name))
        if not passages:
            continue
        ranked = ranked_passages(draft, name)
        right = [covered_share(text, passages) >= 0.5 for text in ranked[:3]]
        hits.setdefault(name, {1: [], 3: []})
        hits[name][1].append(any(right[:1]))
        hits[name][3].append(any(right[:3]))


def hit_figures(hits: dict[str, dict[int, list[bool]]], prefix: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for k in (1, 3):
        per = {name: share(h[k]) for name, h in hits.items()}
        present = [v for v in per.values() if v is not None]
        found[f"{prefix}{k}"] = round(statistics.fmean(present), 3) if present else None
        found |= {f"{prefix}{k}_{name}": value for name, value in per.items()}
    return found


def held_out_models(docs: list[Document], learned: dict[str, Labelled]) -> dict[str, FinderModel]:
    """For each document, a finder trained on the other publishers' documents only."""
    models: dict[str, FinderModel] = {}
    for train, test in publisher_folds(docs, FOLDS):
        model = fit([learned[d.file] for d in train if d.file in learned], name="held-out")
        models |= {d.file: model for d in test}
    return models


def finder_figures(docs: list[Labelled], threshold: float) -> dict[str, Any]:
    """The finder alone, cross-validated by publisher: hit@k, written P/R/false fills, calibration."""
    mine, _ = cross_validate(docs, threshold=threshold)
    found: dict[str, Any] = {}
    for name, f in mine.items():
        if f["documents"]:
            found |= {f"finder_{key}_{name}": value for key, value in f.items() if key != "documents"}
    errors = [f["calibration_error"] for f in mine.values() if f["calibration_error"] is not None]
    found["finder_calibration_error"] = round(max(errors), 3) if errors else None
    return found


def learning_curve(docs: list[Labelled], threshold: float) -> dict[str, Any]:
    """The finder's hit@1 and hit@3 (over the fields a document states) when trained on 5, 10, 15 documents
    drawn from the other publishers (three draws each), every document held out with its publisher at
    every size: the same held-out documents, so the sizes compare."""
    del threshold
    curve: dict[str, Any] = {}
    groups = sorted({d.group for d in docs})
    for n in CURVE:
        hit1: list[float] = []
        hit3: list[float] = []
        for group in groups:
            pool = [d for d in docs if d.group != group]
            test = [d for d in docs if d.group == group]
            for seed in CURVE_SEEDS:
                model = fit(random.Random(seed).sample(pool, min(n, len(pool))), name="curve")
                for name in model.fields:
                    for doc in test:
                        if doc.passages.get(name) and doc.candidates:
                            order = model.score(doc.x, name).argsort()[::-1]
                            hit1.append(float(doc.labels(name)[order[:1]].any()))
                            hit3.append(float(doc.labels(name)[order[:3]].any()))
        curve[str(n)] = {
            "hit1": round(statistics.fmean(hit1), 3) if hit1 else None,
            "hit3": round(statistics.fmean(hit3), 3) if hit3 else None,
        }
    return curve


def train(docs: list[Labelled], out: Path, threshold: float, name: str) -> dict[str, Any]:
    """The packaged model: trained on every document, each field allowed to write where its figures on
    held-out publishers clear the targets (`sure_enough`), those figures kept in the file."""
    mine, _ = cross_validate(docs, threshold=threshold)
    model = fit(docs, name=name, write=lambda field: sure_enough(mine.get(field, {})))
    trained = {"documents": len(docs), "publishers": len({d.group for d in docs}), "from": "corpus"}
    model = FinderModel(model.name, model.weights, trained, {k: v for k, v in mine.items() if v["documents"]})
    out.write_text(model.to_json(), encoding="utf-8")
    return {"model": name, "written": str(out), "writes": [f for f in model.fields if model.writes(f)]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "folder",
        type=Path,
        nargs="?",
        default=DEFAULT_FOLDER,
        help=f"a corpus folder with index.json and fields.json (default: {DEFAULT_FOLDER})",
    )
    parser.add_argument("--details", type=Path, help="also write one JSON line per document to this file")
    parser.add_argument(
        "--no-finder", action="store_true", help="draft with the rules alone (no held-out finder; faster)"
    )
    parser.add_argument("--curve", action="store_true", help="also print the finder's learning curve (5, 10, 15)")
    parser.add_argument("--train", type=Path, metavar="MODEL", help="train the finder on every document into MODEL")
    parser.add_argument("--name", default="corpus", help="the trained model's name (with --train)")
    args = parser.parse_args(argv)
    missing = [name for name in ("index.json", "fields.json") if not (args.folder / name).is_file()]
    if missing:
        sys.exit(
            f"bench/drafts.py: {args.folder} has no {' or '.join(missing)}: give a corpus folder with its answer key"
        )

    began = time.perf_counter()

    threshold = Settings().draft_confidence_threshold
    docs = list(documents(args.folder))
    learned = {d.file: found for d in docs if (found := labelled(d)) is not None}
    if args.train:
        print(json.dumps(train(list(learned.values()), args.train, threshold, args.name)))
        return
    models = {} if args.no_finder else held_out_models(docs, learned)
    tally = Tally.empty()
    rows: list[dict[str, Any]] = []
    hits: dict[str, dict[int, list[bool]]] = {}
    rule_hits: dict[str, dict[int, list[bool]]] = {}
    scored = failures = 0
    for document in docs:
        model = models.get(document.file)
        if model is not None:
            rules_draft, _ = draft_for(document)
            hit_scores(rules_draft, document.key, rule_hits)
        draft, failure = draft_for(document, Finder(model) if model is not None else None)
        hit_scores(draft, document.key, hits)
        if failure:
            failures += 1
            print(f"{document.file}: {failure}", file=sys.stderr)
        scored += 1
        rows.append({"file": document.file, "failure": failure, **score(draft, document.key, tally)})
    if args.details:
        args.details.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    extra = hit_figures(hits, "hit")
    if models:
        extra |= hit_figures(rule_hits, "rules_hit") | finder_figures(list(learned.values()), threshold)
    if args.curve:
        extra["learning_curve"] = learning_curve(list(learned.values()), threshold)
    seconds = round(time.perf_counter() - began, 2)
    print(json.dumps({**figures(tally, scored, failures), **extra, "seconds": seconds}))


if __name__ == "__main__":
    main()
