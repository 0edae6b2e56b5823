"""The organisation behind a source's address: the data file, the domain rule, the site's name."""

from __future__ import annotations

import socket

import pytest

from pipeline import orgs
from pipeline.errors import VocabularyError
from pipeline.orgs import Org, org_for


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # a repository entry, and an owner entry with its own slug
        ("https://github.com/jupyterhub/mybinder.org-deploy/blob/main/docs/x.md", Org("mybinder.org", "mybinder-org")),
        ("https://github.com/facebookresearch/metaseq/blob/main/notes.md", Org("Meta", "meta")),
        ("https://github.com/Homebrew/brew/issues/1", Org("Homebrew", "homebrew")),
        ("https://raw.githubusercontent.com/rust-lang/crates.io/main/x.md", Org("Rust Project", "rust-lang")),
        # the domain rule, without any entry; a Pages repository is not a domain
        (
            "https://github.com/someone/status.example.io-postmortems/x.md",
            Org("status.example.io", "status-example-io"),
        ),
        ("https://github.com/someone/someone.github.io/blob/main/x.md", Org("someone", "someone")),
        # an unknown account: the account is all there is
        ("https://gist.github.com/Alice/0123abcd", Org("Alice", "alice")),
        # a host entry covers its subdomains
        ("https://blog.rust-lang.org/2023/01/01/x.html", Org("Rust Project", "rust-lang")),
        # the host's registrable name, public suffixes known
        ("https://engineering.example.co.uk/posts/outage", Org("example", "example")),
        ("https://acme.github.io/postmortem", Org("acme", "acme")),
    ],
)
def test_org_from_the_address(url: str, expected: Org) -> None:
    assert org_for(url) == expected


def test_the_site_name_beats_the_host_but_not_the_table_or_a_platform() -> None:
    assert org_for("https://www.example.com/blog/outage", site_name="Example Corp") == Org(
        "Example Corp", "example-corp"
    )
    assert org_for("https://blog.rust-lang.org/x", site_name="Rust Blog") == Org("Rust Project", "rust-lang")
    assert org_for("https://medium.com/@acme/outage", site_name="Medium") == Org("medium", "medium")


def test_the_registry_hint_wins() -> None:
    assert org_for("https://github.com/facebookresearch/x", hint="FAIR") == Org("FAIR", "fair")
    assert org_for("https://github.com/facebookresearch/x", hint="  ") == Org("Meta", "meta")


def test_addresses_and_empty_urls() -> None:
    assert org_for("http://10.0.0.1/report") == Org("10.0.0.1", "10-0-0-1")
    assert org_for("not a url") is None


def test_the_suffix_list_is_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("org_for went to the network")

    orgs._extractor.cache_clear()
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    assert org_for("https://status.example.com.au/incident") == Org("example", "example")


def test_a_malformed_table_is_refused() -> None:
    with pytest.raises(VocabularyError, match=r"github\.acme"):
        orgs._parse({"github": {"acme": "Acme"}})
    with pytest.raises(VocabularyError):
        orgs._parse(["acme"])
