"""The site's static API for tools (pipeline.site.api): read back as a tool reads it, from a real data root."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime

import jsonschema
import pytest

from pipeline.models import SCHEMA_VERSION, Case
from pipeline.site import api
from pipeline.site.context import SiteContext
from pipeline.site.labels import field_label
from pipeline.store import Store
from pipeline.withdraw import withdraw

BUILT = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def library(store: Store, make_case: Callable[..., Case]) -> Store:
    """Three cases in a data root, the third merged into the first by the command's library call."""
    store.write_case(make_case("IL-0001", date="2024-03-01", updated_at="2026-11-01T08:00:00Z"))
    store.write_case(
        make_case(
            "IL-0002", date="2025-01-10", updated_at="2026-10-01T08:00:00.123456Z", published="2026-09-15T08:00:00Z"
        )
    )
    store.write_case(make_case("IL-0003", date="2023-07", updated_at="2026-09-01T08:00:00Z"))
    withdraw(store, "IL-0003", why="the same outage as IL-0001", by="carol", into="IL-0001",
             now=datetime(2026, 11, 20, 12, tzinfo=UTC))  # fmt: skip
    return store


def _render(store: Store) -> dict[str, bytes]:
    return api.render(SiteContext.of(store.cases(), base_url="https://example.org/lib/app", built_at=BUILT))


def test_each_case_is_served_byte_for_byte_as_cases_holds_it(library: Store) -> None:
    files = _render(library)
    for path in library.files("case"):
        assert files[f"api/v1/cases/{path.name}"] == path.read_bytes()
    assert sorted(p for p in files if p.startswith("api/v1/cases/")) == [
        f"api/v1/cases/IL-000{n}.json" for n in (1, 2, 3)
    ]


def test_the_index_lists_every_case_withdrawn_ones_too(library: Store) -> None:
    index = json.loads(_render(library)["api/v1/index.json"])
    assert [entry["id"] for entry in index] == ["IL-0002", "IL-0001", "IL-0003"], "newest first, by date"
    by_id = {entry["id"]: entry for entry in index}
    keys = ["id", "published", "modified", "title", "org", "date", "withdrawn", "aliases", "merged_into"]
    assert all(list(entry) == keys for entry in index), "OSV's fields and the merge's, on every entry"
    assert (by_id["IL-0001"]["aliases"], by_id["IL-0001"]["merged_into"]) == (["IL-0003"], None)
    assert (by_id["IL-0003"]["aliases"], by_id["IL-0003"]["merged_into"]) == ([], "IL-0001")
    assert by_id["IL-0002"]["published"] == "2026-09-15T08:00:00Z" and by_id["IL-0001"]["published"] is None
    assert by_id["IL-0002"]["modified"] == "2026-10-01T08:00:00.123456Z"
    assert by_id["IL-0001"]["withdrawn"] is None
    assert by_id["IL-0003"]["withdrawn"] == by_id["IL-0003"]["modified"] == "2026-11-20T12:00:00Z"
    assert by_id["IL-0001"]["title"] == library.read_case("IL-0001").title
    assert by_id["IL-0003"]["date"] == "2023-07"


def test_modified_id_csv_is_osvs_newest_change_first(library: Store) -> None:
    lines = _render(library)["api/v1/modified_id.csv"].decode().splitlines()
    assert lines == [  # the merge changed both the merged case and its survivor (its aliases)
        "2026-11-20T12:00:00Z,IL-0001",
        "2026-11-20T12:00:00Z,IL-0003",
        "2026-10-01T08:00:00.123456Z,IL-0002",
    ]


def test_the_zip_holds_every_case_file_and_is_the_same_bytes_every_time(library: Store) -> None:
    files = _render(library)
    with zipfile.ZipFile(io.BytesIO(files["api/v1/all.zip"])) as archive:
        assert archive.namelist() == ["IL-0001.json", "IL-0002.json", "IL-0003.json"]
        for name in archive.namelist():
            assert archive.read(name) == library.path("case", name.removesuffix(".json")).read_bytes()
    again = _render(library)
    assert again == files, "an unchanged library renders the same bytes, the zip's included"


def test_the_schema_is_published_with_its_version_and_takes_every_case(library: Store) -> None:
    files = _render(library)
    schema = json.loads(files["api/v1/schema.json"])
    assert schema["schema_version"] == SCHEMA_VERSION
    for path in library.files("case"):
        jsonschema.validate(json.loads(files[f"api/v1/cases/{path.name}"]), schema)


def test_cases_csv_names_its_columns_as_the_pages_do(library: Store) -> None:
    rows = list(csv.DictReader(io.StringIO(_render(library)["api/v1/cases.csv"].decode("utf-8"))))
    assert [row[field_label("id", "en")] for row in rows] == ["IL-0002", "IL-0001", "IL-0003"]
    header = list(rows[0])
    assert header[:3] == ["Case id", "Organisation", "Organisation slug"]
    assert {"Title", "Title (ko)", "Scope", "Components", "Remediation (ko)", "Merged into"} <= set(header)
    assert len(header) == len(set(header)), "no two columns share a name"
    case = library.read_case("IL-0001")
    first = rows[1]
    assert first["Title"] == case.title["en"] and first["Title (ko)"] == case.title["ko"]
    assert first["Components"] == "; ".join(case.components)
    assert first["Remediation"] == "; ".join(a.text["en"] for a in case.remediation)
    assert first["Sources"] == "; ".join(s.url for s in case.sources)
    assert first["Scope"] == case.impact.scope
    assert first["Merged into"] == "" and rows[2]["Merged into"] == "IL-0001"
    assert rows[2]["Why withdrawn"] == "the same outage as IL-0001"


def test_every_column_comes_from_the_model() -> None:
    paths = {path for path, _ in api.case_columns()}
    assert {"impact.scope", "review.reviewed_at", "timeline.detected_after", "withdrawn"} <= paths
    assert all(field_label(path, "en") for path in paths)
