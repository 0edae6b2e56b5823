"""The organisation behind a source's address: the data file, the domain rule, the site's name."""

from __future__ import annotations

import socket

import pytest

from pipeline import orgs
from pipeline.errors import VocabularyError
from pipeline.orgs import Org, PageSays, org_for


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # a repository named like a domain; else the repository's owner, without any entry
        ("https://github.com/jupyterhub/mybinder.org-deploy/blob/main/docs/x.md", Org("mybinder.org", "mybinder-org")),
        ("https://github.com/facebookresearch/metaseq/blob/main/notes.md", Org("facebookresearch", "facebookresearch")),
        ("https://github.com/Homebrew/brew/issues/1", Org("Homebrew", "homebrew")),
        ("https://raw.githubusercontent.com/rust-lang/crates.io/main/x.md", Org("crates.io", "crates-io")),
        # the domain rule, without any entry; a Pages repository is not a domain
        (
            "https://github.com/someone/status.example.io-postmortems/x.md",
            Org("status.example.io", "status-example-io"),
        ),
        ("https://github.com/someone/someone.github.io/blob/main/x.md", Org("someone", "someone")),
        # an unknown account: the account is all there is
        ("https://gist.github.com/Alice/0123abcd", Org("Alice", "alice")),
        # a blog's subdomain: its registrable name
        ("https://blog.rust-lang.org/2023/01/01/x.html", Org("rust-lang", "rust-lang")),
        # the host's registrable name, public suffixes known
        ("https://engineering.example.co.uk/posts/outage", Org("example", "example")),
        ("https://acme.github.io/postmortem", Org("acme", "acme")),
    ],
)
def test_org_from_the_address(url: str, expected: Org) -> None:
    assert org_for(url) == expected


def test_the_site_name_beats_the_host_but_not_a_platform() -> None:
    # The publication's words and the company form are not the organisation's name.
    assert org_for("https://www.example.com/blog/outage", site_name="Example Corp") == Org("Example", "example")
    assert org_for("https://blog.example.net/x", site_name="The Example Engineering Blog") == Org("Example", "example")
    assert org_for("https://www.acme.dev/x", site_name="Acme Status") == Org("Acme", "acme")
    assert org_for("https://medium.com/@acme/outage", site_name="Medium") == Org("medium", "medium")


def test_the_title_and_the_team_count_when_the_address_bears_them_out() -> None:
    says = PageSays(title="Database outage on 3 May | Inside Example Blog")
    assert org_for("https://blog.example.org/x", says=says) == Org("Example", "example")
    # A title's last part that the address does not carry is the headline's, not a site's.
    assert org_for("https://notes.example.org/x", says=PageSays(title="Postmortem - Database outage")) == Org(
        "example", "example"
    )
    text = "We, the Example SRE team, are sorry. The Kafka team helped."
    assert org_for("https://status.example.io/x", says=PageSays(text=text)) == Org("Example SRE", "example")
    assert org_for("https://status.other.io/x", says=PageSays(text="The Kafka team helped.")) == Org("other", "other")


def test_a_copyright_line_names_the_publisher_but_not_a_script_licence() -> None:
    page = (
        "<html><head><script>/* Copyright (c) 2015 Library Foundation */</script></head>"
        "<body><p>The outage.</p><footer>Copyright &copy; 2019-2024 Widgets, Inc. All rights reserved.</footer>"
    )
    assert org_for("https://blog.wdgt.example/x", says=PageSays(text=page)) == Org("Widgets", "widgets")
    # A platform's footer is not read: the address is all there is.
    assert org_for("https://acme.medium.com/x", says=PageSays(text="© 2024 Medium")) == Org("medium", "medium")


def test_the_registry_hint_wins() -> None:
    assert org_for("https://github.com/facebookresearch/x", hint="FAIR") == Org("FAIR", "fair")
    assert org_for("https://github.com/facebookresearch/x", hint="  ") == Org("facebookresearch", "facebookresearch")


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


def test_every_page_of_a_site_gets_one_slug_whatever_each_page_states() -> None:
    # An HTML page states its name in its title; its Markdown copy states none: one slug for both.
    html = PageSays(title="Registry outage postmortem | Inside Acme Blog")
    assert org_for("https://blog.acme-lang.org/2024/05/01/registry-outage.html", says=html) == Org("Acme", "acme-lang")
    assert org_for("https://blog.acme-lang.org/2024/05/01/registry-outage.md") == Org("acme-lang", "acme-lang")
    # The stated name may hold the registrable name too ("Widget Cloud" on widget.dev).
    assert org_for("https://status.widget.dev/x", site_name="Widget Cloud Status") == Org("Widget Cloud", "widget")
    # A name the address does not hold keeps its own slug.
    assert org_for("https://eng.kettle.dev/x", site_name="Teapot Engineering") == Org("Teapot", "teapot")


def test_a_blog_hosts_copyright_line_does_not_name_the_org() -> None:
    # The host's own line after the author's: the author's line, which the address bears out, wins.
    footer = "<footer><p>© 2024 Acme Robotics</p><p>© 2024 Ghost Foundation. Published with Ghost.</p></footer>"
    assert org_for("https://blog.acme-robotics.dev/x", says=PageSays(text=footer)) == Org(
        "Acme Robotics", "acme-robotics"
    )
    # Only the host's line: it names nobody here, the address does.
    for line in ("© 2024 Ghost Foundation", "© 2024 A Medium Corporation", "Copyright © 2024 Automattic Inc."):
        page = f"<p>The outage.</p><footer>{line}</footer>"
        assert org_for("https://notes.kettle.dev/x", says=PageSays(text=page)) == Org("kettle", "kettle"), line


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # a registrable name that is a company name plus a status word: the company
        ("https://discordstatus.com/incidents/abc123", Org("discord", "discord")),
        ("https://www.examplestatus.com/incidents/abc123", Org("example", "example")),
        ("https://acme-status.io/", Org("acme", "acme")),
        ("https://widgetstatuspage.com/history", Org("widget", "widget")),
        # a hosted status platform: the customer is the subdomain, not the platform
        ("https://discord.statuspage.io/incidents/abc123", Org("discord", "discord")),
        ("https://acme.instatus.com/clx0abc", Org("acme", "acme")),
        ("https://acme.betteruptime.com/", Org("acme", "acme")),
        ("https://acme.status.io/", Org("acme", "acme")),
        ("https://acme.statuspal.io/", Org("acme", "acme")),
        ("https://acmestatus.statuspage.io/", Org("acme", "acme")),
        # the platform's own site is the platform's
        ("https://www.statuspage.io/", Org("statuspage", "statuspage")),
        # status.X.com: X
        ("https://status.example.com/incidents/1", Org("example", "example")),
        # a status word alone, or another word at the end, is left as it is (whatsapp is not "whats")
        ("https://status.im/x", Org("status", "status")),
        ("https://www.whatsapp.com/x", Org("whatsapp", "whatsapp")),
        ("https://status.discordapp.com/incidents/abc123", Org("discordapp", "discordapp")),
    ],
)
def test_a_status_pages_org_is_the_company_not_the_status_host(url: str, expected: Org) -> None:
    assert org_for(url) == expected


def test_a_status_page_states_its_company_in_its_titles_lead() -> None:
    # Hosted status pages title an incident "<Page> Status - <incident>"; their footer names the platform.
    says = PageSays(title="Acme Status - Elevated API errors", text="<footer>Powered by Atlassian Statuspage</footer>")
    for url in (
        "https://acmestatus.com/incidents/abc123",
        "https://acme.statuspage.io/incidents/abc123",
        "https://status.acme.com/incidents/abc123",
    ):
        assert org_for(url, says=says) == Org("Acme", "acme"), url
    # A site word the page's name bears out names the site: "Acme" on status.acmeapp.com.
    assert org_for("https://status.acmeapp.com/incidents/abc123", says=says) == Org("Acme", "acme")
    # A stated name the address does not carry is another company's, a title's lead that is a
    # headline (no publication word) is not a site's.
    assert org_for("https://widgetstatus.com/incidents/1", says=says) == Org("widget", "widget")
    headline = PageSays(title="Acme 2.0 - released")
    assert org_for("https://blog.acme.dev/x", says=headline) == Org("acme", "acme")


def test_a_status_platforms_own_name_is_not_the_customer() -> None:
    for name in ("Statuspage", "Atlassian Statuspage", "Instatus", "Better Stack", "Statuspal"):
        assert org_for("https://acme.statuspage.io/", site_name=name) == Org("acme", "acme"), name
        assert orgs.guessed_org("https://acme.instatus.com/", site_name=name) == Org("acme", "acme"), name
