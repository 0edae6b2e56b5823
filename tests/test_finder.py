"""The finder: candidates, features, a model trained and calibrated on documents grouped by publisher,
its file, and the proposals it adds to a draft. Trained here on documents written here (never the corpus)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from pipeline.extract import extract
from pipeline.finder import Finder, load
from pipeline.finder.candidates import candidates
from pipeline.finder.labels import covered_share, publisher, right
from pipeline.finder.model import Document, FinderModel, calibration_error, cross_validate, fit, sure_enough
from pipeline.models import Section, SectionField
from pipeline.propose import OFFERED, propose

SERVICES = ["checkout", "search", "billing", "login", "storage", "scheduler", "gateway", "metrics", "queue", "cache"]
FILLER = [
    "The team met the next morning to go through the logs together.",
    "This document describes what we learned and what we will change.",
    "Several teams took part in the investigation over the following days.",
    "We publish these reviews so that others can learn from our mistakes.",
]


def story(n: int) -> tuple[str, dict[str, str]]:
    """A small postmortem whose headings name no field: the passages must be found by their words."""
    rng = random.Random(n)
    service = SERVICES[n % len(SERVICES)]
    minutes = 10 + n
    passages = {
        "detection": f"An alert on the {service} error rate fired at 10:{n:02d} and paged the on-call engineer.",
        "trigger": f"A configuration change to the {service} load balancer was deployed shortly before.",
        "impact": f"Customers could not use {service} for {minutes} minutes and requests failed.",
        "remediation": f"We rolled back the {service} configuration change and traffic recovered.",
    }
    sentences = [*passages.values(), *rng.sample(FILLER, 3)]
    rng.shuffle(sentences)
    return " ".join(sentences), passages


def document(n: int, group: str) -> Document:
    text, passages = story(n)
    sections = [Section(heading="What happened", text=text)]
    return Document(f"doc-{n}", group, candidates(text, sections), {k: [v] for k, v in passages.items()})


def training_set() -> list[Document]:
    return [document(n, f"publisher-{n % 4}") for n in range(16)]


@pytest.fixture(scope="module")
def model() -> FinderModel:
    return fit(training_set(), name="test-model")


def test_candidates_are_items_rows_and_sentences_with_their_spans() -> None:
    text = (
        "Incident\n\nWe saw errors. The API was down for ten minutes.\n\n"
        "- Roll back the deploy quickly\n- Add an alert on errors\n\n"
        "10:00 | Alert fired for errors\n10:20 | Service back to normal again"
    )
    sections = [
        Section(heading="What happened", text="We saw errors. The API was down for ten minutes."),
        Section(
            heading="Follow-up",
            field=SectionField.ACTION_ITEMS,
            text="- Roll back the deploy quickly\n- Add an alert on errors",
        ),
        Section(
            heading="Timeline",
            field=SectionField.TIMELINE,
            text="10:00 | Alert fired for errors\n10:20 | Service back to normal again",
        ),
    ]
    found = candidates(text, sections)
    assert [(c.kind, c.text) for c in found] == [
        ("sentence", "We saw errors."),
        ("sentence", "The API was down for ten minutes."),
        ("item", "Roll back the deploy quickly"),
        ("item", "Add an alert on errors"),
        ("row", "10:00 | Alert fired for errors"),
        ("row", "10:20 | Service back to normal again"),
    ]
    assert all(text[c.start : c.end] == c.text for c in found)
    assert found[2].section_field == "action_items" and found[0].section_field is None
    assert found[0].position == 0.0 and found[-1].position == 1.0


def test_a_right_passage_is_one_whose_words_lie_in_a_chosen_one() -> None:
    chosen = ["The restart emptied the cache at once, so the database got every request."]
    assert right("the restart emptied the cache at once", chosen)
    assert not right("the database the cache every", chosen)
    assert not right("anything at all", [])
    assert covered_share("", chosen) == 0.0
    assert publisher("https://github.com/acme/postmortems/blob/main/a.md") == "acme"
    assert publisher("https://www.example.org/blog/outage") == "example.org"


def test_the_model_ranks_the_right_sentence_first_on_a_publisher_it_never_saw(model: FinderModel) -> None:
    held_out = document(99, "publisher-unseen")
    for name in ("detection", "trigger", "impact", "remediation"):
        scores = model.score(held_out.x, name)
        best = held_out.candidates[int(np.argmax(scores))]
        assert right(best.text, held_out.passages[name]), (name, best.text)
        assert 0.0 <= scores.min() <= scores.max() <= 1.0


def test_cross_validation_holds_out_whole_publishers_and_reports_each_figure() -> None:
    mine, theirs = cross_validate(training_set(), threshold=0.6, folds=4, fields=("detection",))
    figures = mine["detection"]
    assert theirs is None
    assert figures["documents"] == 16 and figures["hit1"] is not None and figures["hit3"] >= figures["hit1"]
    assert figures["calibration_error"] is not None and 0 <= figures["calibration_error"] <= 1
    # One publisher only: nothing can be held out, so nothing is scored.
    lone = [document(n, "one") for n in range(4)]
    assert cross_validate(lone, threshold=0.6, fields=("detection",))[0]["detection"]["documents"] == 0


def test_calibration_error_is_the_weighted_gap_between_confidence_and_share_right() -> None:
    assert calibration_error([0.8] * 10, [True] * 8 + [False] * 2) == 0.0
    assert calibration_error([0.9, 0.9], [False, False]) == 0.9
    assert calibration_error([], []) is None


def test_a_field_is_written_only_on_figures_measured_on_enough_documents() -> None:
    good = {"documents": 20, "without": 8, "precision": 0.8, "recall": 0.5, "false_fills": 0.1}
    assert sure_enough(good)
    assert not sure_enough({**good, "without": 3})  # a false-fill share of three documents says little
    assert not sure_enough({**good, "precision": 0.6})
    assert not sure_enough({**good, "false_fills": 0.3})


def test_the_model_file_round_trips_and_a_wrong_one_is_one_line(model: FinderModel, tmp_path) -> None:
    text = model.to_json()
    again = FinderModel.from_json(text)
    doc = document(7, "x")
    assert np.allclose(again.score(doc.x, "detection"), model.score(doc.x, "detection"))
    assert again.name == "test-model"
    path = tmp_path / "finder.json"
    path.write_text(json.dumps({**json.loads(text), "hashed": 12}))
    with pytest.raises(ValueError, match=r"finder.json: not a finder model of this version") as caught:
        load(path)
    assert "\n" not in str(caught.value)
    path.write_text('{"format": 1, "name": "x; rm -rf /"}')
    with pytest.raises(ValueError, match=r"^.*finder.json: not a finder model: ") as caught:
        load(path)
    assert "\n" not in str(caught.value)


def test_the_packaged_model_loads_offline_and_says_its_name() -> None:
    finder = load()
    assert finder.name.startswith("corpus-")
    assert set(finder.model.fields) >= {"trigger", "detection", "impact", "root_cause", "remediation"}


def test_proposals_offer_the_finders_best_beside_the_rules_never_over_a_written_passage(model: FinderModel) -> None:
    text, passages = story(42)
    # Told in words no drafting rule has a cue for, but the finder learned from the other documents.
    seen = "The billing error rate climbed on the engineer's dashboard at 10:42 for the on-call team."
    text, passages = text.replace(passages["detection"], seen), {**passages, "detection": seen}
    page = f"# Outage\n\n## What happened\n\n{text}\n".encode()
    extraction = extract(page, "https://example.org/2024/outage.md", "text/markdown")
    found = propose(extraction, 0.6, Finder(model))
    offered = found.suggestions()
    by_finder = [e for e in offered if e.rule.startswith("finder.")]
    assert by_finder and all(e.model == "test-model" and e.reasons for e in by_finder)
    detection = [e for e in offered if e.field == "detection"]
    assert 1 <= len(detection) <= OFFERED
    assert right(detection[0].quote, [passages["detection"]])
    # Ranked: each field's offers surest first.
    for name in {e.field for e in offered}:
        sure = [e.confidence or 0 for e in offered if e.field == name]
        assert sure == sorted(sure, reverse=True)
    written = found.evidence()
    for e in by_finder:
        assert not any(w.field == e.field and w.start < e.end and e.start < w.end for w in written)
    # The finder writes nothing its figures have not earned: every value is the rules' own.
    assert found.values() == propose(extraction, 0.6).values()
