"""The public face of the library: its exported names, its error tree, its vocabulary of reasons."""

from __future__ import annotations

import asyncio
import inspect
import re
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from manual import section

import pipeline
from pipeline import errors
from pipeline.batch import each, raise_unexpected, tally
from pipeline.reasons import MEANINGS, Reason
from pipeline.retry_after import retry_after_seconds

EXPORTED = [
    "Action", "ArchiveState", "ArchiveStatus", "ArchivedErrorPage", "AssistError", "AssistFailure", "AssistRun",
    "Candidate", "CandidateState", "CaptureLimitError", "Case", "CaseContent", "ConflictError", "Dismissal", "Draft",
    "DraftSource",
    "DraftState", "DroppedProposal", "DuplicateSource", "EmptyDocument", "Evidence", "ExtractError", "Fault", "Feed",
    "FeedEntry",
    "FeedKind", "FeedState", "FetchError", "FetchFailure", "FmtReport", "GITHUB_HOSTS", "INTERVAL", "Impact",
    "IncidentStart", "IncidentlibError", "InitReport", "InvalidId", "InvalidRecord", "LAYOUT", "LinkState",
    "LinkStatus",
    "LockBusy", "LookupRefused",
    "MEANINGS", "MODELS", "MachineTranslation", "Origin", "PossibleDuplicate", "PrivateAddressRefused",
    "Proposal", "Reason",
    "RecordError", "RecordKind", "RecordNotFound", "Review", "ReviewError", "ReviewerError", "RunRecord",
    "SCHEMA_VERSION",
    "Section",
    "SectionField", "Settings", "SettingsError", "Source", "SourceEntry", "State", "Store", "StoreError", "Timeline",
    "Transition", "UnreadableDocument", "UnsupportedContent", "ValidateReport", "VocabularyError",
    "WaybackAuthError", "WaybackCongested", "WaybackError", "WaybackExcluded", "WaybackNotAsked",
    "WaybackThrottled", "WaybackUnavailable",
    "archived_original",
    "candidate_id", "canonical_url", "case_base_url", "case_id", "case_number", "check_case_id", "check_draft_id",
    "data_root_problem", "draft_id_for", "fmt", "init_data_root", "intake", "interval_seconds", "is_case_id",
    "json_schema",
    "language_faults", "part_draft_id", "same_page_key", "slugify", "utc_now", "validate", "write_atomic",
]  # fmt: skip


def test_the_public_api_is_exactly_these_names() -> None:
    assert pipeline.__all__ == EXPORTED
    assert all(hasattr(pipeline, name) for name in EXPORTED)


def test_every_error_is_in_the_tree_its_module_draws_and_under_the_root() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, Exception)]
    assert errors.__doc__ is not None
    for error in classes:
        assert issubclass(error, errors.IncidentlibError), error
        assert re.search(rf"[─ ]{error.__name__}\b", errors.__doc__), f"{error.__name__} is not drawn in the tree"
        assert error.__name__ in errors.__all__


def test_errors_carry_what_they_concern() -> None:
    fetch = errors.FetchError("https://example.org/a", Reason.HTTP_404, "answered HTTP 404: not found", status=404)
    assert (fetch.url, fetch.reason, fetch.status) == ("https://example.org/a", "http-404", 404)
    assert str(fetch) == "https://example.org/a: answered HTTP 404: not found"
    review = errors.ReviewError("cannot approve", draft_id="acme-x-00000000")
    assert (review.draft_id, str(review)) == ("acme-x-00000000", "acme-x-00000000: cannot approve")
    extract = errors.EmptyDocument("no text", url="https://example.org/b")
    assert (extract.url, extract.reason, str(extract)) == ("https://example.org/b", "extract-empty", str(extract))
    busy = errors.LockBusy("locks/captures.lock: held", path="locks/captures.lock")
    assert busy.path == "locks/captures.lock" and not isinstance(busy, errors.StoreError)
    assert errors.CaptureLimitError("gone", limit="captures").limit == "captures"
    assert errors.DuplicateSource("https://a.example/", "sources/a.yaml:3").where == "sources/a.yaml:3"


def test_every_reason_has_a_meaning_and_a_line_in_the_manual() -> None:
    listed = section("crawl.md", "## Failure reasons") + section("assist.md", "## Failure reasons")
    assert set(MEANINGS) == set(Reason)
    for reason in Reason:
        assert f"| `{reason}` | {MEANINGS[reason]} |" in listed, f"the manual's failure reasons do not list {reason}"


@pytest.mark.parametrize(
    ("status", "reason"),
    [(404, "http-404"), (410, "http-410"), (418, "http-4xx"), (507, "http-5xx"), (204, "http-unexpected")],
)
def test_an_http_status_has_its_own_reason_or_its_group(status: int, reason: str) -> None:
    assert Reason.for_status(status) == reason


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("http-418", "http-4xx"),
        ("gave-up:submit-failed", "submit-failed"),
        ("archived-http-404", "archived-error-page"),
        ("robots", "robots"),
        ("never-heard-of-it", "never-heard-of-it"),  # left for validation to refuse
    ],
)
def test_reasons_written_by_earlier_versions_are_read_in_todays_vocabulary(written: str, read: str) -> None:
    assert Reason.parse(written) == read


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC).timestamp()
    assert retry_after_seconds("120", now) == 120.0
    assert retry_after_seconds(format_datetime(datetime(2026, 11, 30, 12, 1, 30, tzinfo=UTC), usegmt=True), now) == 90.0
    assert retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT", now) == 0.0  # in the past: now
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None


def test_each_gives_a_bug_its_own_result_and_raises_them_together_after() -> None:
    async def work(n: int) -> str:
        if n % 2:
            raise ValueError(f"bug {n}")
        return f"ok {n}"

    heard: list[str] = []
    results, bugs = asyncio.run(each(range(4), work, lambda n, exc: f"failed {n}", heard.append))
    assert sorted(results) == ["failed 1", "failed 3", "ok 0", "ok 2"] and sorted(heard) == sorted(results)
    with pytest.raises(ExceptionGroup) as raised:
        raise_unexpected(bugs, "items")
    assert str(raised.value) == "2 items failed unexpectedly (2 sub-exceptions)"
    raise_unexpected([], "items")  # nothing to raise


def test_tally_lists_every_outcome_of_the_literal_in_its_order() -> None:
    from pipeline.crawl import Outcome

    assert tally(["new", "failed", "new"], Outcome) == {
        "new": 2,
        "updated": 0,
        "unchanged": 0,
        "failed": 1,
        "deferred": 0,
        "skipped": 0,
    }
