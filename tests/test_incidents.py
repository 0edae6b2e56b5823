"""Several incidents in one document: flagged on the draft with where each starts."""

from __future__ import annotations

import json
from datetime import timedelta

from pipeline.draft import apply_extraction, new_draft
from pipeline.extract import extract
from pipeline.extract.blocks import full_text
from pipeline.extract.durations import durations_in
from pipeline.extract.incidents import incidents_in
from pipeline.extract.markdown import read_markdown
from pipeline.ids import canonical_url
from pipeline.models import Draft, Origin, SourceEntry
from pipeline.precedence import Hints, Said
from pipeline.queue import queue, show
from pipeline.store import Store

URL = "https://example.org/reports/2024-03.md"

MONTHLY = b"""# Operations report, March 2024

Two incidents this month.

## Cache outage - March 3, 2024

The cache cluster ran out of memory and the site was slow for an hour.

### Timeline

#### March 3, 2024 10:00

An alert paged the on-call engineer.

## Login failures - March 17, 2024

The identity provider's certificate expired.

## Lessons

Watch certificates.
"""

ONE = b"""# Cache outage on March 3, 2024

## Summary

The cache ran out of memory.

## Timeline

### 2024-03-03

Alerted at 10:00.

### 2024-03-04

Cleaned up at 09:00.
"""


def _starts(body: bytes) -> list[tuple[str, int]]:
    blocks = read_markdown(body.decode()).blocks
    text = full_text(blocks)
    found = incidents_in(blocks, text)
    for incident in found:
        assert text[incident.offset :].startswith(incident.heading)
    return [(i.heading, i.offset) for i in found]


def test_dated_headings_of_one_level_each_start_an_incident() -> None:
    starts = _starts(MONTHLY)
    assert [heading for heading, _ in starts] == [
        "Cache outage - March 3, 2024",
        "Login failures - March 17, 2024",
    ]
    assert starts[0][1] < starts[1][1]


def test_numbered_incident_headings_count_too() -> None:
    body = b"# Log\n\n## Incident #1\n\nDisk full.\n\n## Incident #2\n\nDNS broke.\n\n## Incident 3: again\n\nDisk.\n"
    assert [h for h, _ in _starts(body)] == ["Incident #1", "Incident #2", "Incident 3: again"]


def test_one_incident_with_dated_timeline_headings_is_not_flagged() -> None:
    assert _starts(ONE) == []


def test_a_single_dated_heading_is_one_incident() -> None:
    assert _starts(b"# Report\n\n## Outage - May 2, 2024\n\nDown.\n\n## Root cause\n\nA bug.\n") == []


def _draft(body: bytes) -> Draft:
    entry = SourceEntry(url=URL)
    extraction = extract(body, URL, None)
    origin = Origin(url=URL, canonical_url=canonical_url(URL), final_url=URL, format=extraction.format)
    return apply_extraction(new_draft(entry), entry, extraction, origin)


def test_the_draft_carries_the_starts_as_offsets_into_its_text() -> None:
    draft = _draft(MONTHLY)
    assert len(draft.incidents) == 2
    for incident in draft.incidents:
        assert (draft.text or "")[incident.start :].startswith(incident.heading)
    assert _draft(ONE).incidents == []


def test_a_draft_written_before_the_field_existed_loads_with_none() -> None:
    data = json.loads(new_draft(SourceEntry(url=URL)).model_dump_json())
    data.pop("incidents")
    assert Draft.model_validate(data).incidents == []


def test_queue_and_show_say_when_a_draft_holds_several(store: Store) -> None:
    draft = _draft(MONTHLY)
    store.write_draft(draft)
    [entry] = queue(store, ["en"])
    assert entry.incidents == 2
    blocks = show(store, draft.id, ["en"])
    [block] = [b for b in blocks if b.title.startswith("incidents")]
    assert block.title == "incidents (2 in one document; each drafted on its own; review those)"
    assert block.lines[0].endswith(f": Cache outage - March 3, 2024 -> {draft.id}-part-1")


def test_show_says_nothing_of_incidents_for_one(store: Store) -> None:
    draft = _draft(ONE)
    store.write_draft(draft)
    assert queue(store, ["en"])[0].incidents == 0
    assert not [b for b in show(store, draft.id, ["en"]) if b.title.startswith("incidents")]


def test_each_incident_is_read_on_its_own_from_the_blocks_under_its_heading() -> None:
    extraction = extract(MONTHLY, URL, None, hints=Hints(registry=Said.hint(date="2024-04-01")))
    first, second = extraction.parts
    assert first.title == "Operations report, March 2024: Cache outage - March 3, 2024"
    assert (first.date, first.date_kind, second.date) == ("2024-03-03", "incident", "2024-03-17")
    assert first.text.startswith("Cache outage - March 3, 2024") and "certificate" not in first.text
    assert second.text.startswith("Login failures") and "Watch certificates" not in second.text, "to the next heading"
    assert first.summary == "The cache cluster ran out of memory and the site was slow for an hour."
    assert (first.parts, first.incidents) == ([], [])
    assert extract(ONE, URL, None).parts == []


def test_show_says_to_split_a_draft_written_before_incidents_had_drafts(store: Store) -> None:
    draft = _draft(MONTHLY)
    unnamed = [i.model_copy(update={"draft_id": None}) for i in draft.incidents]
    store.write_draft(draft.model_copy(update={"incidents": unnamed}))
    [block] = [b for b in show(store, draft.id, ["en"]) if b.title.startswith("incidents")]
    assert block.title == "incidents (2 in one document; split the draft)"
    assert block.lines[0].endswith(": Cache outage - March 3, 2024")


def _headings_split(body: bytes) -> list[str]:
    return [heading for heading, _ in _starts(body)]


UNDATED_LOGBOOK = b"""# Platform logbook

## Search results went stale

### Timeline

- 10:00 UTC: Index updates stopped.
- 10:40 UTC: Updates resumed.

### Root cause

A queue consumer deadlocked.

## Uploads rejected

### Impact

Uploads over 10 MB failed.

### Resolution

The proxy's body limit was raised.
"""


def test_sibling_headings_each_with_their_own_structure_start_incidents() -> None:
    assert _headings_split(UNDATED_LOGBOOK) == ["Search results went stale", "Uploads rejected"]


STATUS_HISTORY = b"""# Past incidents

## Elevated API errors

Resolved - This incident has been resolved.

Investigating - We are looking into errors on the API.

## Delayed webhooks

Resolved - Webhooks are delivered again.

Identified - A worker pool was undersized.

## Scheduled database upgrade

The upgrade finished on time.
"""


def test_a_status_history_splits_at_each_incident_with_updates() -> None:
    assert _headings_split(STATUS_HISTORY) == ["Elevated API errors", "Delayed webhooks"]


AVAILABILITY = b"""# Availability report: May

In May we had two incidents.

## May 3 09:40 UTC (lasting 48 minutes)

During this incident, jobs queued for a long time before they started. A proxy in front of the
database ran out of memory and restarted in a loop, so every service that read the job table was
slow until we gave the proxy more memory.

## May 21 17:02 UTC (lasting 1 hour and 10 minutes)

Users could not sign in with single sign-on. An expired certificate on the identity provider's
side made every assertion fail to verify, and sign-ins recovered as soon as it was replaced by us.
"""


def test_an_availability_report_splits_at_each_day_and_time_heading() -> None:
    assert _headings_split(AVAILABILITY) == [
        "May 3 09:40 UTC (lasting 48 minutes)",
        "May 21 17:02 UTC (lasting 1 hour and 10 minutes)",
    ]


def test_each_incident_has_its_durations_and_the_document_none() -> None:
    draft = _draft(AVAILABILITY)
    assert draft.timeline is None or (draft.timeline.resolved_after, draft.timeline.detected_after) == (None, None)
    extraction = extract(AVAILABILITY, URL, None)
    first, second = (durations_in(part.sections).resolved_after for part in extraction.parts)
    assert (first, second) == (timedelta(minutes=48), timedelta(hours=1, minutes=10))


POSTMORTEM = b"""# Checkout outage

## Summary

Checkout failed for an hour.

## Timeline

### Detection

- 10:00 UTC: Errors began.
- 10:05 UTC: An alert fired.

### Recovery

- 10:40 UTC: The release was rolled back.
- 11:00 UTC: Service is restored.

## Root cause

### The bad release

Impact: every checkout failed.

Resolution: the release was rolled back.

### The missing canary

Impact: nothing caught it.

Root cause: the canary stage was skipped.

## Action items

- Restore the canary stage.
"""


def test_a_postmortems_sub_headings_are_not_incidents() -> None:
    assert _headings_split(POSTMORTEM) == []


PHASES = b"""# Incident report: API latency

## Detection

### 09:00 UTC - First alert

- An alert fired.

### 09:05 UTC - Confirmed

- The on-call engineer confirmed it.

## Resolution

### 09:40 UTC - Mitigation started

Resolved - traffic was moved.

### 10:00 UTC - Service restored

Resolved - all healthy.
"""


def test_a_single_report_written_in_phases_is_one_incident() -> None:
    assert _headings_split(PHASES) == []


def test_two_structured_headings_among_many_plain_ones_are_not_a_logbook() -> None:
    plain = b"".join(b"\n## Note %d\n\nSome words here.\n" % n for n in range(5))
    assert _headings_split(UNDATED_LOGBOOK + plain) == []


def test_an_incident_labelled_heading_needs_one_sign_of_its_own() -> None:
    body = (
        b"# Log\n\n## Incident: disk full\n\nResolved - space freed.\n\n"
        b"## Incident: DNS\n\nRoot cause: a bad zone file.\n"
    )
    assert _headings_split(body) == ["Incident: disk full", "Incident: DNS"]


NARRATIVE = b"""# Outage of the shop

## Summary

The shop was down.

## What we saw

- 10:00 UTC: Errors began.
- 10:10 UTC: An alert fired.

Impact: every order failed.

## What we did

Resolution: we rolled back.

- 11:00 UTC: The release was rolled back.
- 11:10 UTC: Service is restored.
"""


def test_a_postmortems_phases_with_times_and_labels_are_one_incident() -> None:
    assert _headings_split(NARRATIVE) == []


HISTORY_WITHOUT_HEADINGS = b"""# Incident history

## November 2024

[Elevated API error rates](https://status.example.org/incidents/a1)

This incident has been resolved.

Nov 29, 18:36 - 20:02 UTC

[Delayed webhook deliveries](https://status.example.org/incidents/b2)

Webhooks are delivered again; a worker pool was undersized.

Nov 17, 09:10 - 11:45 UTC

Degraded search performance

Nov 3, 2024 22:50 UTC - Nov 4, 2024 01:15 UTC
"""

SPANS_IN_A_TIMELINE = b"""# Database outage

## Timeline

Database failover

Nov 29, 18:36 - 20:02 UTC

Cache warmup

Nov 29, 20:02 - 20:30 UTC

## Root cause

A disk filled up.
"""

ONE_STATUS_INCIDENT = b"""# Elevated API error rates

Resolved

This incident has been resolved.

Posted Nov 29, 2024 - 20:02 UTC

Investigating

We are investigating elevated error rates on the API.

Posted Nov 29, 2024 - 18:40 UTC
"""


def test_a_history_without_headings_splits_at_each_title_with_its_own_span() -> None:
    assert _headings_split(HISTORY_WITHOUT_HEADINGS) == [
        "Elevated API error rates",
        "Delayed webhook deliveries",
        "Degraded search performance",
    ]
    parts = extract(HISTORY_WITHOUT_HEADINGS, URL, None).parts
    assert [part.text.splitlines()[-1] for part in parts] == [
        "Nov 29, 18:36 - 20:02 UTC",
        "Nov 17, 09:10 - 11:45 UTC",
        "Nov 3, 2024 22:50 UTC - Nov 4, 2024 01:15 UTC",
    ]


def test_spans_in_a_timeline_and_one_incidents_updates_are_one_incident() -> None:
    assert _headings_split(SPANS_IN_A_TIMELINE) == []
    assert _headings_split(ONE_STATUS_INCIDENT) == []


def test_phases_under_a_field_heading_back_to_back_or_in_order_are_one_incident() -> None:
    under_field = b"# DB outage\n\n## What happened\n\nPrimary failover\n\nNov 29, 18:36 - 19:02 UTC\n\n"
    under_field += b"Replica rebuild\n\nNov 29, 21:00 - 22:30 UTC\n"
    back_to_back = b"# DB outage\n\nPrimary failover\n\nNov 29, 18:36 - 20:02 UTC\n\n"
    back_to_back += b"Cache warmup\n\nNov 29, 20:02 - 20:30 UTC\n"
    in_order = b"# DB outage\n\nFirst outage window\n\nNov 29, 18:36 - 19:02 UTC\n\n"
    in_order += b"Second outage window\n\nNov 29, 20:10 - 20:30 UTC\n"
    assert [_headings_split(doc) for doc in (under_field, back_to_back, in_order)] == [[], [], []]
