"""Time to detection and to resolution, from stated lines, sentences and timelines (own texts)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pipeline.extract.durations import durations_in, parse_duration
from pipeline.models import Section, SectionField

TIMELINE = SectionField.TIMELINE


def section(text: str, heading: str = "", field: SectionField | None = None) -> Section:
    return Section(heading=heading, field=field, text=text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("13 minutes", timedelta(minutes=13)),
        ("about 2 hours", timedelta(hours=2)),
        ("1h50m", timedelta(hours=1, minutes=50)),
        ("1 hour and 31 minutes", timedelta(hours=1, minutes=31)),
        ("an hour", timedelta(hours=1)),
        ("forty-five minutes", timedelta(minutes=45)),
        ("soon", None),
    ],
)
def test_a_duration_is_read_as_people_write_it(text: str, expected: timedelta | None) -> None:
    assert parse_duration(text) == expected


def test_stats_lines_give_both_durations_with_their_line_as_basis() -> None:
    found = durations_in([section("- Time to detection: 4 minutes\n- Time to resolution: 1 hour 10 minutes")])
    assert found.detected_after == timedelta(minutes=4)
    assert found.resolved_after == timedelta(hours=1, minutes=10)
    assert found.rule == {"detected_after": "stated", "resolved_after": "stated"}
    assert found.basis["detected_after"] == ("Time to detection: 4 minutes",)  # the text, not the list mark


def test_an_abbreviated_stats_line_counts() -> None:
    assert durations_in([section("TTD: 7 minutes")]).detected_after == timedelta(minutes=7)


def test_an_unknown_stated_value_stops_the_timeline_from_answering() -> None:
    timeline = section("- 10:00 UTC: The API started failing.\n- 10:05 UTC: An alert fired.", "Timeline", TIMELINE)
    found = durations_in([section("Time to detection: ?"), timeline])
    assert found.detected_after is None


def test_a_sentence_about_the_outage_states_its_length() -> None:
    found = durations_in([section("The shop was down for about 25 minutes. We rolled back the release.")])
    assert found.resolved_after == timedelta(minutes=25)
    assert found.basis["resolved_after"] == ("The shop was down for about 25 minutes.",)


def test_resolved_after_a_stated_time() -> None:
    found = durations_in([section("The incident was resolved after 3 hours of work.")])
    assert found.resolved_after == timedelta(hours=3)


def test_a_length_that_is_not_the_incidents_is_not_taken() -> None:
    # No incident word: the rollback's own length is not the outage's.
    assert durations_in([section("The rollback took about one minute.")]).resolved_after is None


def test_a_timeline_gives_detection_and_resolution_from_the_problems_start() -> None:
    timeline = section(
        "All times are in UTC.\n\n"
        "- 2023-03-02 09:10: Requests to the checkout started failing with errors.\n"
        "- 09:18: An alert paged the on-call engineer.\n"
        "- 09:40: The change was reverted.\n"
        "- 09:52: Service is restored.",
        "Timeline",
        TIMELINE,
    )
    found = durations_in([timeline])
    assert found.detected_after == timedelta(minutes=8)
    assert found.resolved_after == timedelta(minutes=42)
    assert found.rule["resolved_after"] == "timeline"
    assert found.basis["resolved_after"] == (
        "2023-03-02 09:10: Requests to the checkout started failing with errors.",
        "09:52: Service is restored.",
    )


def test_a_timeline_crosses_midnight() -> None:
    timeline = section(
        "- 2022-11-05 23:50 CET: The database ran out of disk and writes failed.\n"
        "- 23:58: A customer reported errors.\n"
        "- 00:20: The disk was grown.\n"
        "- 00:35: The incident is resolved.",
        "Timeline",
        TIMELINE,
    )
    found = durations_in([timeline])
    assert found.detected_after == timedelta(minutes=8)
    assert found.resolved_after == timedelta(minutes=45)


def test_dated_headings_carry_the_day_across_entries() -> None:
    sections = [
        section("", "Timeline", TIMELINE),
        section("", "2021-06-01", TIMELINE),
        section("The login service went down after the upgrade.", "22:00 UTC", TIMELINE),
        section("", "2021-06-02", TIMELINE),
        section("Users report they cannot log in.", "07:30", TIMELINE),
        section("Everything is back to normal.", "08:00", TIMELINE),
    ]
    found = durations_in(sections)
    assert found.detected_after == timedelta(hours=9, minutes=30)
    assert found.resolved_after == timedelta(hours=10)


def test_a_zone_stated_on_one_entry_holds_for_the_next() -> None:
    timeline = section(
        "- 2020-01-10 16:00 PST: Builds started failing.\n"
        "- 16:20: We noticed the failures.\n"
        "- 17:00: Service is restored.",
        "Timeline",
        TIMELINE,
    )
    found = durations_in([timeline])
    assert (found.detected_after, found.resolved_after) == (timedelta(minutes=20), timedelta(hours=1))


def test_a_hedged_resolution_is_not_the_end() -> None:
    timeline = section(
        "- 2020-01-10 10:00 UTC: The proxy crashed.\n"
        "- 10:20: Service appears to be restored.\n"
        "- 10:25: Service is restored.",
        "Timeline",
        TIMELINE,
    )
    assert durations_in([timeline]).resolved_after == timedelta(minutes=25)


@pytest.mark.parametrize(
    "first",
    [
        "Users report that the site is down.",  # already a report: the start is earlier, and unknown
        "The staging deploy failed.",  # not production
    ],
)
def test_no_durations_without_a_known_start(first: str) -> None:
    timeline = section(f"- 2020-01-10 10:00 UTC: {first}\n- 10:30: Service is restored.", "Timeline", TIMELINE)
    found = durations_in([timeline])
    assert (found.detected_after, found.resolved_after) == (None, None)


def test_times_outside_a_timeline_and_documents_without_times_give_nothing() -> None:
    found = durations_in(
        [section("At 10:00 the site was slow; by 11:00 it was fine.", "Summary", SectionField.SUMMARY)]
    )
    assert (found.detected_after, found.resolved_after, found.basis) == (None, None, {})


def test_a_stated_total_finds_the_start_entry_that_has_no_problem_cue() -> None:
    timeline = section(
        "- 2021-02-03 21:00 UTC: A maintainer published the new release.\n"
        "- 21:10 UTC: A user reported broken downloads.\n"
        "- 22:00 UTC: Fix deployed to production.",
        "Timeline",
        TIMELINE,
    )
    summary = section("The downloads were broken for 1 hour in total.", "Summary", SectionField.SUMMARY)
    found = durations_in([summary, timeline])
    assert found.resolved_after == timedelta(hours=1)
    assert found.rule == {"detected_after": "timeline", "resolved_after": "stated"}
    assert found.detected_after == timedelta(minutes=10)


def _timeline_of(*lines: str) -> Section:
    return section("\n".join(f"- {line}" for line in lines), "Timeline", TIMELINE)


def test_a_timeline_without_a_stated_zone_gives_no_duration() -> None:
    found = durations_in([_timeline_of("2023-03-02 09:10: The API started failing.", "09:52: Service is restored.")])
    assert (found.detected_after, found.resolved_after, found.basis) == (None, None, {})


def test_a_zone_stated_outside_the_timeline_holds_for_it() -> None:
    note = section("All times are in UTC.", "Summary", SectionField.SUMMARY)
    timeline = _timeline_of("2023-03-02 09:10: The API started failing.", "09:52: Service is restored.")
    assert durations_in([note, timeline]).resolved_after == timedelta(minutes=42)


def test_a_zone_stated_late_in_the_timeline_holds_for_the_entries_before_it() -> None:
    timeline = _timeline_of(
        "2023-03-02 09:10: The API started failing.", "09:20 UTC: An alert fired.", "09:52: Service is restored."
    )
    found = durations_in([timeline])
    assert (found.detected_after, found.resolved_after) == (timedelta(minutes=10), timedelta(minutes=42))


def test_the_stated_beginning_is_the_start_and_the_alert_the_detection() -> None:
    summary = section("The errors started at 13:40 UTC, when a bad config reached the load balancers.", "Summary")
    timeline = _timeline_of(
        "2024-05-02 14:02 UTC: An alert fired for elevated errors.",
        "14:30 UTC: The config was reverted.",
        "14:45 UTC: The incident is resolved.",
    )
    found = durations_in([summary, timeline])
    assert (found.detected_after, found.resolved_after) == (timedelta(minutes=22), timedelta(minutes=65))
    assert found.basis["detected_after"] == (
        "The errors started at 13:40 UTC, when a bad config reached the load balancers.",
        "2024-05-02 14:02 UTC: An alert fired for elevated errors.",
    )


def test_an_alert_first_in_the_timeline_is_not_the_start() -> None:
    timeline = _timeline_of(
        "2024-05-02 14:02 UTC: An alert fired: error rates are elevated.",
        "14:10 UTC: The on-call engineer is investigating the errors.",
        "14:45 UTC: The incident is resolved.",
    )
    found = durations_in([timeline])
    assert (found.detected_after, found.resolved_after) == (None, None)


def test_two_stated_ends_in_one_zone_give_the_length() -> None:
    found = durations_in([section("On May 2 between 12:20 and 14:40 UTC, requests to the API failed.")])
    assert found.resolved_after == timedelta(hours=2, minutes=20)
    assert found.basis["resolved_after"] == ("On May 2 between 12:20 and 14:40 UTC, requests to the API failed.",)


@pytest.mark.parametrize(
    "text",
    [
        "Between 12:20 and 14:40, requests to the API failed.",  # no zone
        "Between 23:20 and 00:40 UTC, requests to the API failed.",  # a day crossed, unsaid
        "Between 12:20 CET and 14:40 UTC, requests to the API failed.",  # two zones
    ],
)
def test_stated_ends_without_one_known_zone_give_nothing(text: str) -> None:
    assert durations_in([section(text)]).resolved_after is None


@pytest.mark.parametrize(
    "text",
    [
        "The site will be down for 2 hours during the migration.",  # planned
        "A failover would have limited the outage to 5 minutes.",  # supposed
        "We ran the cluster for 10 days without an incident.",  # negated
        "The fix took 40 minutes to roll out during the outage.",  # an action's length
    ],
)
def test_sentences_that_do_not_tell_what_happened_state_no_length(text: str) -> None:
    assert durations_in([section(text)]).resolved_after is None


def test_a_heading_states_a_length_as_an_aside() -> None:
    found = durations_in([section("Actions jobs were delayed.", "June 1 09:40 UTC (lasting 48 minutes)")])
    assert found.resolved_after == timedelta(minutes=48)
    assert found.basis["resolved_after"] == ("June 1 09:40 UTC (lasting 48 minutes)",)


def test_the_length_the_incident_took_is_stated() -> None:
    found = durations_in([section("The outage took about 35 minutes from the first error to recovery.")])
    assert found.resolved_after == timedelta(minutes=35)
