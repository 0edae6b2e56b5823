"""The capture steps' outcomes are an enum whose values are the words reports and records always used."""

from __future__ import annotations

import json

from pipeline.archive import ArchiveReport, SourceArchive
from pipeline.batch import tally
from pipeline.capture import CaptureOutcome
from pipeline.reasons import Reason

WORDS = ["captured", "reused", "confirmed", "submitted", "unconfirmed", "waiting", "failed"]


def test_the_outcomes_are_the_words_in_the_order_a_report_counts_them() -> None:
    assert [str(outcome) for outcome in CaptureOutcome] == WORDS
    assert tally(["failed", CaptureOutcome.REUSED, "reused"], CaptureOutcome) == dict.fromkeys(WORDS, 0) | {
        "reused": 2,
        "failed": 1,
    }


def test_a_report_serialises_its_outcomes_as_plain_words() -> None:
    report = ArchiveReport(
        [
            SourceArchive("d-1", "https://example.org/a", CaptureOutcome.CONFIRMED, archived="https://x/web/1/a"),
            SourceArchive("d-2", "https://example.org/b", CaptureOutcome.WAITING, Reason.THROTTLED),
        ]
    )
    written = json.loads(json.dumps(report.to_dict()))
    assert [s["outcome"] for s in written["sources"]] == ["confirmed", "waiting"]
    assert written["counts"] == dict.fromkeys(WORDS, 0) | {"confirmed": 1, "waiting": 1}
    assert written["waiting"] == {"throttled": 1} and written["failures"] == {}
    assert all(type(key) is str for key in report.counts())
