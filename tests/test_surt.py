"""SURT keys as the Wayback Machine's index writes them (vectors checked against the archive's rules)."""

from __future__ import annotations

import pytest

from pipeline.surt import prefix_range, surt_key


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://www.Example.com/", "com,example)/"),
        ("http://example.com", "com,example)/"),
        ("http://example.com:80/a/", "com,example)/a"),
        ("https://example.com:443/a", "com,example)/a"),
        ("https://example.com:8443/a", "com,example:8443)/a"),
        ("http://www2.example.com/Path/Page.HTML?B=2&a=1#frag", "com,example)/path/page.html?a=1&b=2"),
        ("https://WWW.example.com/a/b/?", "com,example)/a/b"),
        ("http://example.com/a%20b?x=%41", "com,example)/a%20b?x=a"),
        ("https://github.com/Org/Repo/issues/12", "com,github)/org/repo/issues/12"),
        ("https://sub.example.co.uk/x/", "uk,co,example,sub)/x"),
        ("http://archive.org/goo/?a=2&b&a=1", "org,archive)/goo?a=1&a=2&b"),
        ("https://bücher.example/ä", "example,xn--bcher-kva)/%c3%a4"),
        ("http://127.0.0.1:8080/pm/1", "127.0.0.1:8080)/pm/1"),
        ("https://example.com/a/./b/../c", "com,example)/a/c"),
    ],
)
def test_a_url_has_the_key_the_index_gives_it(url: str, key: str) -> None:
    assert surt_key(url) == key


def test_spellings_of_one_page_share_one_key() -> None:
    spellings = [
        "https://example.com/docs/outage",
        "http://www.example.com/docs/outage",
        "https://example.com:443/docs/outage/",
        "HTTPS://EXAMPLE.COM/Docs/Outage#timeline",
    ]
    assert len({surt_key(url) for url in spellings}) == 1


def test_a_prefix_keeps_its_folder_apart_from_a_sibling_with_the_same_start() -> None:
    low, high = prefix_range("https://example.com/docs/")
    assert (low, high) == ("com,example)/docs/", "com,example)/docs0")
    assert low <= surt_key("https://example.com/docs/outage") < high
    assert not low <= surt_key("https://example.com/docs-old/outage") < high
