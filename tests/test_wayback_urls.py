"""A capture's link, parsed once: `<base>/web/<stamp><flags>/<original>`, and given back unchanged."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.wayback import ArchivedUrl, snapshot_timestamp, snapshot_url


def test_a_link_of_the_public_archive() -> None:
    link = "https://web.archive.org/web/20240102030405/https://example.org/x"
    archived = ArchivedUrl.parse(link)
    assert archived == ArchivedUrl("https://web.archive.org", "20240102030405", "", "https://example.org/x")
    assert archived is not None and str(archived) == link
    assert archived.path == "/web/20240102030405/https://example.org/x"
    assert archived.captured_at == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_flags_after_the_stamp() -> None:
    link = "https://web.archive.org/web/20240102030405id_/https://example.org/x"
    archived = ArchivedUrl.parse(link)
    assert archived == ArchivedUrl("https://web.archive.org", "20240102030405", "id_", "https://example.org/x")
    assert archived is not None and str(archived) == link
    assert snapshot_timestamp(link) is None, "a link snapshot_url makes carries no flags"


def test_a_stand_ins_loopback_base_and_a_bare_path() -> None:
    link = "http://127.0.0.1:8123/web/20240102030405/http://127.0.0.1:9000/post"
    archived = ArchivedUrl.parse(link)
    assert archived is not None
    assert (archived.base, archived.original) == ("http://127.0.0.1:8123", "http://127.0.0.1:9000/post")
    assert str(archived) == link
    path = ArchivedUrl.parse("/web/20240102030405im_/https://example.org/a.png")
    assert path == ArchivedUrl("", "20240102030405", "im_", "https://example.org/a.png")
    assert path is not None and str(path) == path.path == "/web/20240102030405im_/https://example.org/a.png"


def test_a_stamp_shorter_than_14_digits_names_its_periods_start() -> None:
    archived = ArchivedUrl.parse("https://web.archive.org/web/2024/https://example.org/x")
    assert archived is not None and archived.stamp == "2024"
    assert archived.captured_at == datetime(2024, 1, 1, tzinfo=UTC)
    monthly = ArchivedUrl.parse("https://web.archive.org/web/202403/https://example.org/x")
    assert monthly is not None and monthly.captured_at == datetime(2024, 3, 1, tzinfo=UTC)
    assert snapshot_timestamp("https://web.archive.org/web/2024/https://example.org/x") == "2024"


def test_a_stamp_that_names_no_moment_parses_but_has_no_time() -> None:
    archived = ArchivedUrl.parse("https://web.archive.org/web/20240003000000/https://example.org/x")
    assert archived is not None and archived.stamp == "20240003000000"
    with pytest.raises(ValueError):
        archived.captured_at  # noqa: B018 - reading the property is the check


def test_the_original_keeps_its_own_web_its_query_and_its_escapes() -> None:
    original = "https://example.org/web/2020/a%20b/%7Euser?q=1&r=/web/3#part"
    link = f"https://web.archive.org/web/20240102030405/{original}"
    archived = ArchivedUrl.parse(link)
    assert archived is not None and archived.original == original
    assert str(archived) == link


@pytest.mark.parametrize(
    "link",
    [
        "https://example.org/x",  # no /web/
        "https://archive.ph/abc",
        "https://web.archive.org/web/https://example.org/x",  # no stamp: the newest capture
        "https://web.archive.org/web/2024*/https://example.org/x",  # the calendar of captures
        "https://web.archive.org/web/202401020304050/https://example.org/x",  # 15 digits
        "https://web.archive.org/web/20240102030405",  # nothing after the stamp
        "https://web.archive.org/web/20240102030405ID_/https://example.org/x",  # flags are lower case
        "",
    ],
)
def test_a_link_of_another_shape_is_none(link: str) -> None:
    assert ArchivedUrl.parse(link) is None
    assert snapshot_timestamp(link) is None


def test_the_first_web_is_the_archives() -> None:
    """A base without digits after its `/web/` is no link, even when the original holds one."""
    assert ArchivedUrl.parse("https://example.org/web/about/web/20240102030405/https://example.org/x") is None


def test_snapshot_url_makes_the_link_parse_reads() -> None:
    link = snapshot_url("20240102030405", "https://example.org/x?a=1", "http://127.0.0.1:8123")
    assert link == "http://127.0.0.1:8123/web/20240102030405/https://example.org/x?a=1"
    assert ArchivedUrl.parse(link) == ArchivedUrl(
        "http://127.0.0.1:8123", "20240102030405", "", "https://example.org/x?a=1"
    )
    assert snapshot_timestamp(link) == "20240102030405"
