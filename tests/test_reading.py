"""Commands that read records never lie or crash on them: broken files, every field, text as it stands."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import captured_source

from pipeline.evidence import Span, evidence_for
from pipeline.fields import WITHDRAWAL
from pipeline.models import Case, Draft, Origin, RunRecord, Section, Transition
from pipeline.store import Store

DRAFT_ID = "example-org-1-00000001"
# Page and person text that Rich would read as markup: a tag that vanishes, a closing tag that crashes it.
MARKUP = "[kind] of outage, see [/etc/ssl] and [bold]this[/bold]"
LONG = "The checkpoint writer waited on the metadata server. " * 6 + "THE-VERY-END"


def full_draft(case_json: dict[str, Any], **changes: Any) -> Draft:
    """A draft with every field filled: the suite's case, with sections, text, history and links."""
    url = "https://example.org/postmortems/1"
    fields = {k: v for k, v in case_json.items() if k not in ("id", "url", "updated_at", "sources")}
    data = {
        **fields,
        "id": DRAFT_ID,
        "state": "published",
        "case_id": "IL-0428",
        "related": ["IL-0427"],
        "recurrence_of": "IL-0400",
        "updated_at": "2026-11-20T10:00:00Z",
        "url": "https://benchlet.com/incidentlib/app/cases/IL-0428",
        "origin": Origin(url=url, canonical_url=url, format="markdown").model_dump(mode="json"),
        "sources": [captured_source(url)],
        "text": "Summary\n\n" + LONG,
        "sections": [Section(heading="Root cause", field="root_cause", text=LONG).model_dump(mode="json")],
        "history": [
            Transition(
                at="2026-11-19T10:00:00Z", by="carol", from_state="extracted", to_state="extracted", changed=["org"]
            ).model_dump(mode="json")
        ],
        "extracted": {"title": "0" * 64},
        "created_at": "2026-11-18T10:00:00Z",
        # The writer assist's material: a proposal waiting, the last request, an accepted translation.
        "proposals": [
            {
                "path": "lessons.en",
                "text": "Checkpoints should be written from a copy.",
                "passages": [LONG.split(". ")[0]],
                "model": "stand-in",
                "prompt": "propose/1",
                "made_at": "2026-11-19T09:00:00Z",
                "text_sha": "0" * 64,
            }
        ],
        "assist": {
            "propose": {
                "asked_at": "2026-11-19T09:00:00Z",
                "model": "stand-in",
                "prompt": "propose/1",
                "text_sha": "0" * 64,
                "dropped": [{"path": "trigger.en", "why": "cites no passage of the text"}],
            }
        },
        "machine_translated": {
            "summary.ko": {
                "model": "stand-in",
                "prompt": "translate-ko/1",
                "english": case_json["summary"]["en"],
                "accepted_by": "dana",
                "accepted_at": "2026-11-19T09:30:00Z",
            }
        },
    }
    return Draft.model_validate({**data, **changes})


def labels(output: str) -> set[str]:
    """The field names `show` printed: the start of each `name: value` line and each block's title."""
    return set(re.findall(r"^([a-z_]+)(?=[.: (]|$)", output, re.M))


def test_show_prints_every_field_of_a_draft(cli: Callable, store: Store, root: Path, case_json: dict) -> None:
    store.write_draft(full_draft(case_json))
    shown = cli("show", DRAFT_ID, "--root", str(root))
    assert shown.exit_code == 0, shown.output
    assert set(Draft.model_fields) - {"id"} <= labels(shown.stdout)
    out = shown.stdout
    assert out.startswith(f"{DRAFT_ID}  published  (case IL-0428)\n")
    for action in [*case_json["remediation"], *case_json["action_items"]]:
        assert action["text"]["en"] in out and action["text"]["ko"] in out
    for part, value in case_json["impact"].items():
        assert f"impact.{part}: {value}\n" in out
    assert "timeline.detected_after: PT30M\n" in out and "timeline.resolved_after: PT41M\n" in out
    assert f"- {case_json['docs'][0]}\n" in out
    assert "related: IL-0427\n" in out and "recurrence_of: IL-0400\n" in out
    assert "- 2026-11-19 10:00 carol: extracted -> extracted (changed org)\n" in out


def test_show_prints_a_published_case(cli: Callable, store: Store, root: Path, make_case: Callable[..., Case]) -> None:
    store.write_case(  # left out when empty: filled here
        make_case("IL-0001", machine_translations=["summary.ko"], published="2026-12-01T09:00:00Z", aliases=["IL-0009"])
    )
    shown = cli("show", "IL-0001", "--root", str(root))
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("IL-0001  published case\n")
    assert set(Case.model_fields) - {"id", *WITHDRAWAL} <= labels(shown.stdout), "a standing case has no withdrawal"


def test_show_names_a_case_that_is_not_there(cli: Callable, root: Path) -> None:
    missing = cli("show", "IL-0009", "--root", str(root))
    assert missing.exit_code == 1 and missing.stderr == "Error: cases/IL-0009.json: no case with id 'IL-0009'\n"


def test_show_cuts_sections_to_a_preview_and_full_prints_them_whole(
    cli: Callable, store: Store, root: Path, case_json: dict
) -> None:
    store.write_draft(full_draft(case_json))
    preview = cli("show", DRAFT_ID, "--root", str(root)).stdout
    assert "- Root cause -> root_cause: The checkpoint writer waited" in preview
    assert "THE-VERY-END" not in preview and "…" in preview
    assert f"text\n{len('Summary') + 2 + len(LONG)} characters; --full prints it\n" in preview
    full = cli("show", DRAFT_ID, "--full", "--root", str(root)).stdout
    assert full.count("THE-VERY-END") == 2, "the section and the extracted text, whole"


def test_show_prints_page_and_person_text_literally(cli: Callable, store: Store, root: Path, case_json: dict) -> None:
    draft = full_draft(
        case_json,
        title={"en": MARKUP},
        sections=[Section(heading=MARKUP, text=MARKUP).model_dump(mode="json")],
        history=[
            Transition(at="2026-11-19T10:00:00Z", by="[bob]", to_state="rejected", comment=MARKUP).model_dump(
                mode="json"
            )
        ],
    )
    store.write_draft(draft)
    for full in ([], ["--full"]):
        shown = cli("show", DRAFT_ID, *full, "--root", str(root))
        assert shown.exit_code == 0, shown.output
        assert f"title.en\n{MARKUP}\n" in shown.stdout
        assert f"- {MARKUP} -> -" in shown.stdout and f"[bob]: - -> rejected: {MARKUP}" in shown.stdout


def test_queue_prints_page_text_literally(cli: Callable, store: Store, root: Path, make_draft: Callable) -> None:
    store.write_draft(make_draft(title={"en": "[kind] [/etc/ssl]"}, org="[Acme]"))
    table = cli("queue", "--root", str(root))
    assert table.exit_code == 0, table.output
    assert "[kind] [/etc/ssl]" in table.stdout and "[Acme]" in table.stdout


def test_status_prints_run_errors_literally(cli: Callable, store: Store, root: Path) -> None:
    run = RunRecord(started_at="2026-11-29T10:00:00+00:00", state="failed", error="[/etc/ssl]")
    store.state.record_run("crawl", run)
    shown = cli("status", "--root", str(root), env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "failed: [/etc/ssl]" in shown.stdout


@pytest.fixture
def broken(store: Store, root: Path, make_draft: Callable) -> Draft:
    """A good draft beside two broken files: invalid JSON, and a name that is no draft id."""
    good = make_draft()
    store.write_draft(good)
    (root / "drafts" / "half-written-0000.json").write_text('{"id": ')
    (root / "drafts" / "Copy of it.json").write_text(good.model_dump_json())
    return good


def test_queue_lists_a_broken_draft_as_unreadable_and_goes_on(cli: Callable, root: Path, broken: Draft) -> None:
    listed = cli("queue", "--sort", "id", "--json", "--root", str(root))
    assert listed.exit_code == 0, listed.output
    entries = {e["id"]: e for e in json.loads(listed.stdout)}
    assert entries[broken.id]["state"] == "extracted"
    assert entries["half-written-0000"]["state"] == "unreadable"
    assert entries["half-written-0000"]["problem"].startswith("drafts/half-written-0000.json: -: not valid JSON: ")
    assert entries["Copy of it"]["problem"] == (
        "drafts/Copy of it.json: invalid draft id 'Copy of it': expected lower-case letters, digits and single dashes"
    )
    table = cli("queue", "--root", str(root)).stdout
    assert "unreadable" in table and "drafts/half-written-0000.json: -: not valid JSON" in table


def test_the_queue_filters_unreadable_drafts_by_state(cli: Callable, root: Path, broken: Draft) -> None:
    def states(*args: str) -> list[str]:
        return [e["state"] for e in json.loads(cli("queue", *args, "--json", "--root", str(root)).stdout)]

    assert states("--state", "extracted") == ["extracted"]
    assert states("--state", "unreadable") == ["unreadable", "unreadable"]
    assert states("--sort", "state") == ["unreadable", "unreadable", "extracted"]


def test_the_queue_filters_unreadable_drafts_by_what_is_known_of_them(cli: Callable, root: Path, broken: Draft) -> None:
    # All that is known of a broken file is its id and its age (since it last changed).
    old = root / "drafts" / "half-written-0000.json"
    ten_days_ago = time.time() - 10 * 86400
    os.utime(old, (ten_days_ago, ten_days_ago))

    def ids(*args: str) -> list[str]:
        return sorted(e["id"] for e in json.loads(cli("queue", *args, "--json", "--root", str(root)).stdout))

    assert ids("--older-than", "5") == ["half-written-0000"]
    assert ids("--org", "nobody") == [] and ids("--component", "cache") == []  # they cannot match
    assert ids("--org", "nobody", "--state", "unreadable") == ["Copy of it", "half-written-0000"]


def test_status_lists_a_broken_draft_with_its_reason(cli: Callable, root: Path, broken: Draft) -> None:
    report = json.loads(cli("status", "--json", "--root", str(root)).stdout)
    assert report["drafts"] == {"extracted": 1}
    assert [(u["path"], u["problem"][:19]) for u in report["unreadable"]] == [
        ("drafts/Copy of it.json", "invalid draft id 'C"),
        ("drafts/half-written-0000.json", "-: not valid JSON: "),
    ]
    text = cli("status", "--root", str(root))
    assert text.exit_code == 0
    assert "unreadable drafts/half-written-0000.json: -: not valid JSON: " in text.stdout


EVIDENCED = (
    "Summary\n\nA storage maintenance window throttled the metadata servers.\n\n"
    "Detection\n\nWe were paged at 09:12 when checkpoints stalled.\n\n"
    "Action items\n\n- Alert when no training step completes for five minutes.\n"
    "- Alert when no training step completes for five minutes, in the other region too."
)


def evidenced_draft(case_json: dict, archived: bool = True) -> Draft:
    def entry(field: str, rule: str, quote: str, occurrence: int = 0) -> dict[str, Any]:
        at = EVIDENCED.index(quote)
        for _ in range(occurrence):
            at = EVIDENCED.index(quote, at + 1)
        return evidence_for(field, EVIDENCED, rule, Span(quote, start=at)).model_dump()

    draft = full_draft(
        case_json,
        text=EVIDENCED,
        evidence=[
            entry("trigger", "heading", "A storage maintenance window throttled the metadata servers."),
            entry("timeline.detected_after", "timeline", "We were paged at 09:12"),
            entry("action_items.1", "list-item", "Alert when no training step completes for five minutes", 1),
            entry("symptoms_text", "cue.symptoms", "checkpoints stalled"),
            entry("components.0", "vocabulary.components", "checkpoints"),
            entry("components.2", "vocabulary.components", "storage"),
            entry("components.2", "vocabulary.components", "metadata servers"),
        ],
    )
    if not archived:
        source = draft.sources[0].model_copy(update={"archived": None})
        draft = draft.model_copy(update={"sources": [source]})
    return draft


def test_show_prints_each_fields_evidence_beside_it_with_a_link_to_the_passage(
    cli: Callable, store: Store, root: Path, case_json: dict
) -> None:
    draft = evidenced_draft(case_json)
    store.write_draft(draft)
    out = cli("show", DRAFT_ID, "--root", str(root)).stdout
    archived = draft.sources[0].archived
    detected = EVIDENCED.index("We were paged")
    assert (
        "timeline.detected_after: PT30M\n"
        f"    evidence (timeline): \u201cWe were paged at 09:12\u201d at {detected}-{detected + 22}\n"
        f"      {archived}#:~:text=We%20were%20paged%20at%2009:12\n"
    ) in out
    assert "evidence: 7 passages, each beside its field\n" in out
    # A vocabulary term's words: one line for each term, beside the list.
    assert (
        "components: checkpointing, nccl, storage\n"
        "    words for components.0: \u201ccheckpoints\u201d\n"
        "    words for components.2: \u201cstorage\u201d, \u201cmetadata servers\u201d\n"
    ) in out
    trigger = case_json["trigger"]["en"]
    assert f"trigger.en\n{trigger}\n    evidence (heading): \u201cA storage maintenance window" in out
    # The second of two equal items: the link names the words around it so that it opens there.
    second = case_json["action_items"][1]["text"]["en"]
    assert (
        f"2. en: {second}\n"
        f"2. ko: {case_json['action_items'][1]['text']['ko']}\n"
        "    evidence (list-item): \u201cAlert when no training step completes for five minutes\u201d"
    ) in out
    assert (
        f"{archived}#:~:text=minutes.-,Alert%20when%20no%20training%20step%20completes%20for%20five%20minutes,-%2C\n"
    ) in out


def test_show_links_the_source_itself_before_it_is_archived_and_says_when_a_quote_went_stale(
    cli: Callable, store: Store, root: Path, case_json: dict
) -> None:
    draft = evidenced_draft(case_json, archived=False)
    store.write_draft(draft.model_copy(update={"symptoms_text": None, "action_items": draft.action_items[:1]}))
    out = cli("show", DRAFT_ID, "--root", str(root)).stdout
    assert f"      {draft.sources[0].url}#:~:text=We%20were%20paged%20at%2009:12\n" in out
    assert "symptoms_text: -\n    evidence (cue.symptoms): \u201ccheckpoints stalled\u201d" in out
    assert "evidence of fields not shown above\naction_items.1:\n    evidence (list-item): \u201cAlert when" in out
    store.write_draft(draft.model_copy(update={"text": EVIDENCED.replace("paged", "alerted")}))
    out = cli("show", DRAFT_ID, "--root", str(root)).stdout
    assert "\u201cWe were paged at 09:12\u201d at " in out and "(no longer in the text: it changed since)\n" in out


def test_show_prints_a_suggestion_beside_its_field_with_its_confidence(
    cli: Callable, store: Store, root: Path, case_json: dict
) -> None:
    draft = evidenced_draft(case_json)
    quote = "when checkpoints stalled"
    offered = evidence_for(
        "detection", EVIDENCED, "cue.detection+modal", Span(quote, start=EVIDENCED.index(quote)), confidence=0.35
    )
    store.write_draft(draft.model_copy(update={"detection": None, "suggestions": [offered]}))
    out = cli("show", DRAFT_ID, "--root", str(root)).stdout
    at = EVIDENCED.index(quote)
    line = f"suggestion 0 (cue.detection+modal, confidence 0.35): \u201c{quote}\u201d at {at}-{at + len(quote)}"
    assert f"detection: -\n    {line}" in out
    assert "suggestions: 1 passages offered, not written, each beside its field" in out
