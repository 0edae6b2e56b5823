"""The organisation that had an incident, from its source's address, pure.

A postmortem's address often names someone else: the code host (`github.com/jupyterhub/…`
is mybinder.org's), a blog platform, a deployment repository. The first answer of:

1. the registry's hint;
2. on a code host: the repository, then its owner, in `orgs.yaml`; a repository named
   like a domain (`mybinder.org-deploy` → mybinder.org); else the owner, the account;
3. elsewhere: the host (or a parent domain) in `orgs.yaml`; what the page says of itself
   (`PageSays`), unless the site is a platform for other people's writing: its site name
   (og:site_name), the site part of its title ("… | Inside Rust Blog") when the address bears
   it out, a copyright line ("© 2024 Example Inc."), "the X team" when the address bears it
   out; the host's registrable name (`blog.rust-lang.org` → rust-lang, `news.bbc.co.uk` → bbc).
   A stated name the registrable name holds, or that holds it ("Rust" on rust-lang.org), takes
   the registrable name's slug: one slug for every page of the site, whatever each page states.

A name the page states is cleaned of what names the publication rather than its owner: a
leading "The"/"Inside", trailing "Blog", "Engineering", "Status", "News", a company form
("Inc.", "Ltd"). `orgs.yaml` holds only the exceptions these general rules get wrong (the
platforms, an account that names someone else); it is not a list of known organisations.

`known_org` and `guessed_org` split that answer in two for pipeline.precedence: what the table
or the page's own statements say (known), and what only the address suggests (a guess: an
account, a domain-named repository, a registrable name, an IP address), which a feed entry's
org outranks.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from dataclasses import dataclass
from importlib import resources
from urllib.parse import unquote, urlsplit

import tldextract
import yaml

from pipeline.errors import VocabularyError
from pipeline.ids import GITHUB_HOSTS, slugify

__all__ = [
    "Org",
    "OrgTable",
    "PageSays",
    "clean_name",
    "guessed_org",
    "is_status_host",
    "known_org",
    "org_for",
    "org_table",
]

# A repository named for the site it deploys: `mybinder.org-deploy`, `example.com`, `status.example.io`.
# Pages repositories (`owner.github.io`) name the account's site, not an organisation.
_DOMAIN_REPO = re.compile(
    r"(?P<domain>[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:org|com|io|net|dev|rs|ai|app|cloud))"
    r"(?:[-_](?:deploy|deployment|infra|ops|site|website|status|postmortems?|incidents?))?"
)
_PAGES_HOSTS = ("github.io", "gitlab.io")
# Words that name a publication, not its owner: "The Cloudflare Blog", "Slack Engineering",
# "Google Cloud Status Dashboard", "Inside Rust Blog".
_LEADING = frozenset({"the", "inside", "official"})
_TRAILING = frozenset(
    "blog blogs engineering tech technology news newsroom status dashboard page updates developers "
    "developer docs documentation community team incidents incident reports postmortems website site "
    "all rights reserved".split()
)
_COMPANY = frozenset("inc inc. ltd ltd. llc llc. gmbh corp corp. corporation limited plc co co. ag bv s.a.".split())
# "© 2024 Example Inc.", "Copyright (c) 2019-2024 Example, Inc. All rights reserved."
_COPYRIGHT = re.compile(
    r"(?:©|&copy;|&#169;|\(c\)|\bcopyright\b)(?:\s*(?:©|&copy;|&#169;|\(c\)))?\s*"
    r"(?:\d{4}(?:\s*[-–]\s*\d{4})?\s*,?\s*)?"
    r"(?P<holder>[A-Z][\w&'.-]*(?:,?\s+[A-Z][\w&'.-]*){0,3})",
)
# "the Example team", "The Acme SRE Team": the words before "team".
_TEAM = re.compile(r"\b[Tt]he\s+(?P<name>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,2})\s+[Tt]eam\b")
# A script's or a style's text is a library's, not the page's: its licence is someone else's copyright.
_CODE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TITLE_SEPARATOR = re.compile(r"\s+[|·–—-]\s+")
# Words a site's registrable name adds to its company's name to name its status page:
# discordstatus.com, acme-status.io, acmestatuspage.com. Stripped from the address's guess.
_STATUS_WORDS = ("statuspage", "status")
# Words a registrable name adds to its company's name more widely (discordapp.com, acmehq.com):
# stripped only to match a name the page states, never from the address alone (whatsapp).
_SITE_WORDS = (*_STATUS_WORDS, "app", "hq")


@dataclass(frozen=True)
class Org:
    name: str
    slug: str | None


@dataclass(frozen=True)
class OrgTable:
    repos: dict[str, Org]  # "owner/repo" and "owner", lower-case
    hosts: dict[str, Org]
    platforms: frozenset[str]  # site names (lower-case) that are not the author's organisation
    status_hosts: frozenset[str] = frozenset()  # hosted status pages: `customer.statuspage.io`


@dataclass(frozen=True)
class PageSays:
    """What a page says of who publishes it: its site name (og:site_name), its <title>, and text
    where a copyright line or "the X team" may stand (its footer, its body)."""

    site_name: str | None = None
    title: str | None = None
    text: str | None = None


def clean_name(name: str | None) -> str | None:
    """A stated name without the words that name the publication or the company form:
    "The Cloudflare Blog" → Cloudflare, "Example, Inc." → Example; None when nothing is left."""
    found = re.findall(r"[\w&'.-]+", (name or "").replace(",", " "))
    while found and found[0].lower() in _LEADING:
        found = found[1:]
    while found and (found[-1].lower() in _TRAILING or found[-1].lower() in _COMPANY):
        found = found[:-1]
    cleaned = " ".join(found).strip(" .-")
    return cleaned or None


def _without(label: str, words: tuple[str, ...]) -> str:
    """A registrable name without a trailing status or site word (`discordstatus` → discord,
    `acme-status` → acme); unchanged when nothing of two letters or more would be left."""
    for word in words:
        rest = label.removesuffix(word).rstrip("-")
        if rest != label and len(rest) >= 2:
            return rest
    return label


def _company(label: str) -> str:
    """The company a registrable name names: without a status word (`githubstatus` → github)."""
    return _without(label, _STATUS_WORDS)


def _bears_out(name: str, url: str) -> bool:
    """Whether the address carries one of the name's words (of three letters or more): its host's
    labels, or on a code host its owner, split at hyphens and dots; a label also without a
    trailing status or site word (Discord on discordstatus.com or status.discordapp.com)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    labels = host.split(".")
    words = set(re.split(r"[.-]", host)) | {_without(label, _SITE_WORDS) for label in labels}
    if host in GITHUB_HOSTS:
        owner = next((s for s in parts.path.split("/") if s), "")
        words = set(re.split(r"[.-]", owner.lower()))
    return any(w in words for w in re.split(r"[^a-z0-9]+", name.lower()) if len(w) >= 3)


def _title_site(title: str | None) -> str | None:
    pieces = _TITLE_SEPARATOR.split(title or "")
    return pieces[-1].strip() if len(pieces) > 1 else None


def _title_lead(title: str | None) -> str | None:
    """A title's first part when it names a publication ("Acme Status - Elevated errors", as hosted
    status pages title an incident): it ends with a publication word, so it is not a headline's."""
    pieces = _TITLE_SEPARATOR.split(title or "")
    words = pieces[0].split()
    return pieces[0].strip() if len(pieces) > 1 and words and words[-1].lower() in _TRAILING else None


def _stated(says: PageSays, url: str, platforms: frozenset[str]) -> Org | None:
    """The organisation the page states, in order: its site name, its title's site part when the
    address bears it out, its last copyright line (a footer's, not a script's; of several, the last
    the address bears out, so a blog host's own line does not win over the author's), "the X team"
    when the address bears it out; None when it states none."""
    candidates: list[tuple[str | None, bool]] = [
        (says.site_name, False),
        (_title_site(says.title), True),
        (_title_lead(says.title), True),
    ]
    text = _CODE.sub(" ", says.text or "")
    # A holder ends at its sentence's end: "© 2024 Ghost Foundation. Published with Ghost."
    holders = [re.split(r"\.\s", m.group("holder"))[0] for m in _COPYRIGHT.finditer(text)]
    # A blog host's footer may add its own line after the author's: the line the address bears out first.
    holders = [h for h in holders if _bears_out(clean_name(h) or "", url)][-1:] or holders[-1:]
    candidates += [(holder, False) for holder in holders]
    candidates += [(m.group("name"), True) for m in _TEAM.finditer(text)]
    for raw, needs_address in candidates:
        name = clean_name(raw)
        if not name or name.lower() in platforms or (raw or "").strip().lower() in platforms:
            continue
        if needs_address and not _bears_out(name, url):
            continue
        return _named(name)
    return None


def _org(spec: object, where: str) -> Org:
    if not isinstance(spec, dict) or not isinstance(spec.get("org"), str):
        raise VocabularyError(f"pipeline/orgs.yaml: {where}: expected {{org: name, slug: optional}}")
    name = spec["org"]
    return Org(name, str(spec.get("slug") or slugify(name)) or None)


def _parse(data: object) -> OrgTable:
    if not isinstance(data, dict):
        raise VocabularyError("pipeline/orgs.yaml: expected a mapping with github, hosts and platforms")
    repos = {str(k).lower(): _org(v, f"github.{k}") for k, v in (data.get("github") or {}).items()}
    hosts = {str(k).lower(): _org(v, f"hosts.{k}") for k, v in (data.get("hosts") or {}).items()}
    platforms = frozenset(str(p).lower() for p in data.get("platforms") or [])
    return OrgTable(repos, hosts, platforms, frozenset(str(h).lower() for h in data.get("status_hosts") or []))


# libyaml's safe loader when PyYAML has it (the package's own file, read at every command's start: a tenth of
# a second with PyYAML's Python parser), else PyYAML's own; the same values either way.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def org_table() -> OrgTable:
    """The package's table of hosts and repository owners, loaded once per process."""
    source = resources.files("pipeline").joinpath("orgs.yaml")
    return _parse(yaml.load(source.read_text(encoding="utf-8"), Loader=_LOADER))


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # The Public Suffix List snapshot bundled with tldextract, never a download (no suffix list
    # URLs) nor a cache file (no cache_dir): extraction is pure. Private suffixes make
    # `owner.github.io` the account's own domain rather than GitHub's.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def _named(name: str) -> Org:
    return Org(name, slugify(name) or None)


def _domain_repo(repo: str) -> Org | None:
    match = _DOMAIN_REPO.fullmatch(repo.lower())
    if not match or match.group("domain").endswith(_PAGES_HOSTS):
        return None
    return _named(match.group("domain"))


def _on_code_host(segments: list[str], table: OrgTable) -> tuple[Org | None, Org | None]:
    if not segments:
        return None, None
    owner = segments[0].lower()
    repo = segments[1].lower() if len(segments) > 1 else ""
    known = table.repos.get(f"{owner}/{repo}") or table.repos.get(owner)
    # An owner's entry wins over the domain rule: rust-lang/crates.io is the Rust Project's.
    return known, (_domain_repo(repo) if repo else None) or _named(segments[0])


def _for_host(host: str, table: OrgTable) -> Org | None:
    labels = host.split(".")
    for i in range(len(labels) - 1):
        known = table.hosts.get(".".join(labels[i:]))
        if known:
            return known
    return None


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _found(url: str, says: PageSays) -> tuple[Org | None, Org | None]:
    """What the table or the page's own statements say of `url` (known), and what the address alone
    suggests (the guess), each None when there is nothing; the guess counts only without the first."""
    table = org_table()
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if host in GITHUB_HOSTS:
        return _on_code_host(segments, table)
    if not host or _is_address(host):
        return None, (_named(host) if host else None)  # an address names no organisation, but says where
    known = _for_host(host, table)
    if known:
        return known, None
    extracted = _extractor()(host)
    if extracted.suffix.endswith(_PAGES_HOSTS) and extracted.domain:
        # owner.github.io: the account's Pages, known by its owner when the table knows it.
        return table.repos.get(extracted.domain), _named(extracted.domain)
    if f"{extracted.domain}.{extracted.suffix}" in table.status_hosts:
        return _status_host(extracted, says, url, table)
    stated = None if extracted.domain in table.platforms else _stated(says, url, table.platforms)
    domain = _company(extracted.domain)
    if stated:
        return _one_slug(stated, domain), None
    return None, _named(domain or host.removeprefix("www."))


# A hosted status platform's own sites, not a customer's page: www.statuspage.io, docs.instatus.com.
_PLATFORM_OWN = frozenset({"", "www", "docs", "blog", "api", "help", "support", "app", "manage", "dashboard"})


def is_status_host(host: str) -> bool:
    """Whether `host` serves a status page: a customer's page on a hosted platform of the table's
    `status_hosts` (`acme.instatus.com`), a host named for its status (`status.acme.com`), or a site
    whose registrable name ends in "status" (`acmestatus.com`, as companies name their own)."""
    host = host.lower().rstrip(".")
    if not host or _is_address(host):
        return False
    extracted = _extractor()(host)
    registrable = f"{extracted.domain}.{extracted.suffix}"
    if registrable in org_table().status_hosts:
        return extracted.subdomain.split(".")[-1] not in _PLATFORM_OWN
    first = host.split(".")[0]
    return first == "status" or (extracted.domain.endswith("status") and len(extracted.domain) > len("status"))


def _status_host(
    extracted: tldextract.tldextract.ExtractResult, says: PageSays, url: str, table: OrgTable
) -> tuple[Org | None, Org | None]:
    """A hosted status page (`discord.statuspage.io`): the customer is its subdomain, as an account
    is a code host's; what the page states comes first, the platform's own name never counts. The
    platform's own site (`www.statuspage.io`) is the platform's."""
    label = extracted.subdomain.split(".")[-1]
    if label in ("", "www"):
        return None, _named(extracted.domain)
    stated = _stated(says, url, table.platforms)
    if stated:
        return _one_slug(stated, _company(label)), None
    return None, _named(_company(label))


def _one_slug(stated: Org, domain: str) -> Org:
    """The stated name with the slug of the site's registrable name when the two agree (one holds the
    other: "Rust" and rust-lang, "Example SRE" and example): the address is what every page of a site
    shares, its HTML pages, their Markdown copies, a feed's entries and archived copies alike, while a
    stated name varies from page to page or is missing; so every page gets one slug. Names that do
    not agree keep their own (a site named for a product of another company)."""
    name = (stated.slug or "").replace("-", "")
    registrable = slugify(domain)
    compact = registrable.replace("-", "")
    if len(name) >= 3 and slugify(_without(domain, _SITE_WORDS)).replace("-", "") == name != compact:
        return stated  # discordapp and "Discord": the site word names the site, not the company
    if len(name) >= 3 and len(compact) >= 3 and (name in compact or compact in name):
        return Org(stated.name, registrable or stated.slug)
    return stated


def _says(site_name: str | None, says: PageSays | None) -> PageSays:
    return says or PageSays(site_name=site_name)


def known_org(url: str, site_name: str | None = None, *, says: PageSays | None = None) -> Org | None:
    """The organisation `orgs.yaml` or the page's own statements (`says`, else its site name alone)
    give for `url`, or None."""
    return _found(url, _says(site_name, says))[0]


def guessed_org(url: str, site_name: str | None = None, *, says: PageSays | None = None) -> Org | None:
    """The organisation the address alone suggests (an account, a domain, an address) where nothing
    is known of it (`known_org`), or None."""
    known, guess = _found(url, _says(site_name, says))
    return None if known else guess


def org_for(
    url: str, site_name: str | None = None, hint: str | None = None, *, says: PageSays | None = None
) -> Org | None:
    """The organisation behind `url` (see the module's docstring for the order), or None."""
    if hint and hint.strip():
        return _named(hint.strip())
    known, guess = _found(url, _says(site_name, says))
    return known or guess
