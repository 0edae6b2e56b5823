"""List items keep their links: `text (URL)`, bare labels and template text dropped."""

from __future__ import annotations

import pytest

from pipeline.extract.blocks import Block, Link
from pipeline.extract.html import read_html
from pipeline.extract.lists import list_items, render_item
from pipeline.extract.markdown import read_markdown
from pipeline.models import SectionField

ISSUE = "https://example.org/acme/hub/issues/131"


@pytest.mark.parametrize(
    ("text", "links", "expected"),
    [
        # a bare label at the end or the start goes; its URL stays
        (
            "Retry launches more gracefully. (issue)",
            [Link("issue", ISSUE)],
            f"Retry launches more gracefully. ({ISSUE})",
        ),
        ("#131: Add simple logging", [Link("#131", ISSUE)], f"Add simple logging ({ISSUE})"),
        ("Fix the probe, PR", [Link("PR", ISSUE)], f"Fix the probe ({ISSUE})"),
        # a label inside the sentence stays as words
        (
            "Diagnose the original issue, which still occurs",
            [Link("issue", ISSUE)],
            f"Diagnose the original issue, which still occurs ({ISSUE})",
        ),
        ("Write the runbook", [Link("runbook", ISSUE)], f"Write the runbook ({ISSUE})"),
        # a URL written out, at the end: once, after the text
        (f"Limit memory of the proxy ({ISSUE}).", [Link(ISSUE, ISSUE)], f"Limit memory of the proxy. ({ISSUE})"),
        # relative and anchor links add nothing; a priority label goes
        (
            "HIGH Include downloads in the smoke test",
            [Link("smoke test", "#smoke")],
            "Include downloads in the smoke test",
        ),
        # a link alone keeps its words
        ("#12", [Link("#12", ISSUE)], f"#12 ({ISSUE})"),
        ("TODO", [], None),
        ("N/A", [], None),
    ],
)
def test_render_item(text: str, links: list[Link], expected: str | None) -> None:
    assert render_item(text, links) == expected


def test_markdown_action_items_keep_their_links() -> None:
    doc = read_markdown(
        "# Outage\n\n## Action items\n\n### Hub\n\n"
        "- Handle errors on launch more gracefully. [Issue](https://example.org/i/1)\n"
        "- [#2226] Add simple logging\n"
        "- Alert on KIAM restarts\n"
        "  - See https://example.org/METRICS.md\n"
        "- TODO\n\n"
        "### Process\n\nLimit memory of the proxy, see <https://example.org/pr/9>.\n\n"
        "## Lessons\n\n- [not an action](https://example.org/x)\n\n"
        "[#2226]: https://example.org/i/2226\n"
    )
    assert list_items(doc.blocks, SectionField.ACTION_ITEMS) == [
        "Handle errors on launch more gracefully. (https://example.org/i/1)",
        "Add simple logging (https://example.org/i/2226)",
        "Alert on KIAM restarts (https://example.org/METRICS.md)",
        "Limit memory of the proxy. (https://example.org/pr/9)",
    ]


def test_html_items_keep_their_links_and_the_text_stays_as_the_page_reads() -> None:
    filler = "<p>" + "The hub went down for an hour after a deploy and we rolled it back. " * 8 + "</p>"
    page = (
        f"<html><body><article><h1>Outage</h1>{filler}<h2>Action items</h2><ul>"
        '<li>Add much better logging for the hub so we see failed launches <a href="/acme/hub/issues/12">#12</a></li>'
        '<li>Page the on-call person on proxy 5xx rates (<a href="https://example.org/pr/3">PR</a>)</li>'
        f"</ul>{filler}</article></body></html>"
    )
    blocks = read_html(page, "https://example.org/post/1").blocks
    assert "Add much better logging for the hub so we see failed launches #12" in [b.text for b in blocks]
    assert list_items(blocks, SectionField.ACTION_ITEMS) == [
        "Add much better logging for the hub so we see failed launches (https://example.org/acme/hub/issues/12)",
        "Page the on-call person on proxy 5xx rates (https://example.org/pr/3)",
    ]


def test_items_without_links_and_paragraphs_beside_a_list() -> None:
    blocks = [
        Block("Remediation", level=2),
        Block("We restarted the proxy.", kind="para"),
        Block("Rolled back the chart", kind="item"),
    ]
    assert list_items(blocks, SectionField.REMEDIATION) == ["Rolled back the chart"]


def test_an_extraction_carries_its_items_for_the_draft() -> None:
    from pipeline.extract import extract

    page = b"# Outage\n\nThe hub was down.\n\n## Action items\n\n- Alert on restarts [PR](https://example.org/pr/1)\n"
    x = extract(page, "https://example.org/pm.md")
    assert x.items[SectionField.ACTION_ITEMS] == ["Alert on restarts (https://example.org/pr/1)"]
    assert x.items[SectionField.REMEDIATION] == []
