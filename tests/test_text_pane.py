"""The draft page's text pane (pipeline.web.marks and its template): every evidence number lands on
an element of its id that holds its whole passage, whatever the passages' overlaps; the text's own
headings are headings; nothing of the text is lost or added."""

from __future__ import annotations

import random
from pathlib import Path

import lxml.html
import pytest
from helpers import sample_drafts
from jinja2 import Environment, FileSystemLoader

import pipeline.web
from pipeline.models import Evidence, Section
from pipeline.web.marks import PROPOSED_TITLE, Passage, evidence_passages, headings_of, nest, text_pane

_ENV = Environment(loader=FileSystemLoader(Path(pipeline.web.__file__).parent / "templates"), autoescape=True)


def rendered(
    text: str, passages: list[Passage], headings: list[tuple[int, int]] | None = None
) -> lxml.html.HtmlElement:
    """The pane as the page's template writes it, parsed as a browser would (the superscripts taken out)."""
    html = _ENV.get_template("_text.html").render(pieces=text_pane(text, passages, headings or []))
    pane = lxml.html.fragment_fromstring(f'<div class="text">{html}</div>')
    for sup in pane.cssselect("sup"):
        sup.drop_tree()
    return pane


def landing(text: str, passages: list[Passage], pane: lxml.html.HtmlElement) -> list[str]:
    """What is wrong with the pane: an id missing or twice, an element without its whole passage, the
    text changed."""
    wrong = []
    ids = [element.get("id") for element in pane.iter() if element.get("id")]
    if len(ids) != len(set(ids)):
        wrong.append(f"an id twice: {sorted(ids)}")
    for passage in passages:
        found = pane.get_element_by_id(f"mark-{passage.number}", None)
        if found is None:
            wrong.append(f"#mark-{passage.number} is nowhere")
        elif text[passage.start : passage.end] not in found.text_content():
            wrong.append(f"#mark-{passage.number} does not hold {text[passage.start : passage.end]!r}")
    if pane.text_content() != text:
        wrong.append("the text is not the draft's")
    return wrong


WORDS = "the api failed when a node of the cluster was drained and every rank waited".split()


def spans_of(rng: random.Random, length: int) -> list[tuple[int, int]]:
    """Spans as passages overlap in drafts: apart, nested, at one place, crossing, in chains, touching."""
    spans: list[tuple[int, int]] = []
    for _ in range(rng.randint(1, 12)):
        pattern = rng.random()
        if spans and pattern < 0.2:
            spans.append(rng.choice(spans))  # at the same place: two fields from one sentence
        elif spans and pattern < 0.45:
            start, end = rng.choice(spans)  # within another, or around it
            a, b = sorted(rng.sample(range(start, end + 1), 2)) if end - start > 1 else (start, end)
            spans.append((a, b) if rng.random() < 0.5 else (max(0, start - 3), min(length, end + 3)))
        elif spans and pattern < 0.7:
            start, end = rng.choice(spans)  # crossing: starting inside, ending past it
            a = rng.randint(start, max(start, end - 1))
            spans.append((a, min(length, end + rng.randint(1, 20))))
        else:
            a = rng.randrange(length)
            spans.append((a, min(length, a + rng.randint(1, 40))))
    return [(a, b) for a, b in spans if b > a]


@pytest.mark.parametrize("seed", range(40))
def test_every_number_lands_on_an_element_holding_its_passage_however_passages_overlap(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, 6))]
        text = "\n\n".join(lines)
        spans = spans_of(rng, len(text))
        evidence = [Evidence(field="summary.en", quote=text[a:b], start=a, end=b, rule="test") for a, b in spans]
        passages, marks = evidence_passages(text, evidence)
        # A proposal's passages, numbered after the evidence, among them.
        first = len(marks) + 1
        passages += [
            Passage(first + i, a, b, PROPOSED_TITLE, True) for i, (a, b) in enumerate(spans_of(rng, len(text)))
        ]
        headings = headings_of(text, [Section(heading=line, text="") for line in lines if rng.random() < 0.4])
        pane = rendered(text, passages, headings)
        assert landing(text, passages, pane) == [], (text, spans, headings)
        assert len(marks) == len(evidence)


def test_nested_passages_nest_and_passages_at_one_place_share_a_mark_listing_both() -> None:
    text = "On Monday a planned upgrade of the cluster caused a minor DNS issue."
    sentence = (0, len(text))
    upgrade = (text.index("a planned"), text.index(" of the"))
    dns = (text.index("DNS"), text.index(" issue"))
    passages = [
        Passage(1, *sentence, "trigger · cue.trigger"),
        Passage(2, *sentence, "root_cause · cue.root_cause"),
        Passage(3, *upgrade, "contributing.0 · vocabulary.contributing"),
        Passage(4, *dns, "domain.0 · vocabulary.domains"),
    ]
    html = _ENV.get_template("_text.html").render(pieces=text_pane(text, passages))
    assert html == (
        '<mark id="mark-1" title="trigger · cue.trigger; root_cause · cue.root_cause"><span id="mark-2">On Monday '
        '<mark id="mark-3" title="contributing.0 · vocabulary.contributing">a planned upgrade<sup>3</sup></mark>'
        ' of the cluster caused a minor <mark id="mark-4" title="domain.0 · vocabulary.domains">DNS<sup>4</sup>'
        "</mark> issue.</span><sup>1,2</sup></mark>"
    )


def test_crossing_passages_share_one_mark_over_both() -> None:
    text = "first second third fourth"
    passages = [Passage(1, 0, 12, "a"), Passage(2, 6, 25, "b"), Passage(3, 19, 25, "c")]
    (mark,) = nest(passages)
    assert (mark.start, mark.end, mark.label) == (0, 25, "1,2")
    assert [(inner.start, inner.end, inner.label) for inner in mark.children] == [(19, 25, "3")]
    assert landing(text, passages, rendered(text, passages)) == []


def test_the_texts_own_headings_are_headings_and_a_heading_a_passage_crosses_is_styled_only() -> None:
    text = "Outage report\n\nSummary\n\nThe API failed.\n\n## Root cause\n\nA bad config."
    sections = [Section(heading="Outage report", text=""), Section(heading="Summary", text="The API failed.")]
    headings = headings_of(text, sections)
    assert [text[a:b] for a, b in headings] == ["Outage report", "Summary", "## Root cause"]
    summary = text.index("Summary")
    crossing = Passage(1, summary + 4, text.index("failed"), "summary · heading")
    pane = rendered(text, [crossing, Passage(2, 0, 6, "org")], headings)
    assert [h.text_content() for h in pane.cssselect('[role="heading"]')] == ["Outage report", "## Root cause"]
    assert "".join(h.text_content() for h in pane.cssselect("span.heading:not([role])")) == "Summary"
    assert landing(text, [crossing, Passage(2, 0, 6, "org")], pane) == []


def test_a_heading_named_by_a_section_is_found_as_its_own_paragraph_in_order() -> None:
    text = "Summary of the day\n\nSummary\n\nWords.\n\nSummary"
    (found,) = headings_of(text, [Section(heading="Summary", text="Words.")])
    assert found == (text.index("\n\nSummary\n\n") + 2, text.index("\n\nSummary\n\n") + 9)


def test_every_evidence_link_of_the_demos_drafts_lands() -> None:
    for draft in sample_drafts():
        text = draft.text or ""
        passages, marks = evidence_passages(text, draft.evidence)
        assert len(marks) == len(draft.evidence), "every passage stands in the text"
        pane = rendered(text, passages, headings_of(text, draft.sections))
        assert landing(text, passages, pane) == [], draft.id
        assert pane.cssselect('[role="heading"]'), "the sections' headings are headings"
