"""Every setting an operator may change, in one pydantic-settings model.

Each setting is read from the environment as `INCIDENTLIB_<NAME>` (for example
`INCIDENTLIB_ROOT`), or given directly by the command line; the default and the help
stand beside each field. The same `NAME=value` lines may stand in a settings file,
`incidentlib.env`: the data root's own (the settings follow the data root, whoever runs a
command or a flow on it), and the working folder's. The first that gives a value wins:

    the command line (--root)  >  the environment  >  DATA_ROOT/incidentlib.env
        >  ./incidentlib.env (the working folder's, when it is another file)  >  the defaults

The data root itself comes from the first three alone (`--root`, `INCIDENTLIB_ROOT`, the
working folder's file), else the working folder: its own file cannot move it.
"""

from __future__ import annotations

import json
import re
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, DotEnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

# The public API (pipeline/__init__.py takes it from here); the settings files' helpers, for the
# command line and `init`, are imported by name.
__all__ = ["INTERVAL", "Settings", "interval_seconds"]

# The settings file: in the data root (and in the working folder), one NAME=value a line.
SETTINGS_FILE = "incidentlib.env"

# An interval schedule: a number and a unit (seconds, minutes, hours, days).
INTERVAL = re.compile(r"(\d+)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# An archive key: printable ASCII, no space (0x21 to 0x7E).
_KEY = re.compile(r"[!-~]+")


def interval_seconds(schedule: str) -> int | None:
    """Seconds of an interval schedule ("15m" -> 900); None for a cron line."""
    match = INTERVAL.fullmatch(schedule)
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)] if match else None


def interval_text(seconds: int) -> str:
    """An interval in its largest whole unit, as the Prefect server's schedule is shown (3600 -> "1h")."""
    for unit in "dhm":
        if seconds % _UNIT_SECONDS[unit] == 0:
            return f"{seconds // _UNIT_SECONDS[unit]}{unit}"
    return f"{seconds}s"


def schedule_text(schedule: str) -> str:
    """A schedule in one spelling, to compare two: "60m" and "1h" are one interval, and a cron
    line's fields are the same whatever spaces part them."""
    seconds = interval_seconds(schedule)
    return interval_text(seconds) if seconds else " ".join(schedule.split())


class _DataRootFile(DotEnvSettingsSource):
    """The data root's settings file, every setting but the data root itself."""

    def __call__(self) -> dict[str, Any]:
        values = super().__call__()
        values.pop("root", None)
        return values


def _given_root(*sources: PydanticBaseSettingsSource) -> Path:
    """The data root the first source that names one gives (a relative one from the working folder)."""
    for source in sources:
        value = source().get("root")
        if value is not None and str(value).strip():
            return Path(str(value)).expanduser().resolve()
    return Path(".").resolve()


class Settings(BaseSettings):
    # Also read from settings files, KEY=value lines like the environment, for the archive keys
    # above all (git ignores them): the data root's, then the working folder's (see the module's
    # help and settings_customise_sources).
    # hide_input_in_errors: a refused value (an archive key above all) never reaches an error's text.
    model_config = SettingsConfigDict(
        env_prefix="INCIDENTLIB_",
        extra="ignore",
        validate_default=True,
        env_file=SETTINGS_FILE,
        hide_input_in_errors=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The data root's incidentlib.env between the environment and the working folder's file.
        Settings made with `_env_file=None` read no file at all."""
        if getattr(dotenv_settings, "env_file", None) is None:
            return init_settings, env_settings, file_secret_settings
        root = _given_root(init_settings, env_settings, dotenv_settings)
        own = _DataRootFile(settings_cls, env_file=root / SETTINGS_FILE)
        return init_settings, env_settings, own, dotenv_settings, file_secret_settings

    root: Path = Field(
        default=Path("."),
        description="The data root: the folder that holds sources/, drafts/ and cases/.",
    )
    case_id_prefix: str = Field(
        default="IL",
        pattern=r"^[A-Z][A-Z0-9]*$",
        description="Prefix of published case ids (IL gives IL-0428).",
    )
    case_id_digits: int = Field(default=4, ge=4, le=9, description="Zero-padded width of the case number (at least 4).")
    case_id_start: int = Field(
        default=1,
        ge=1,
        description="The number the first case takes when cases/ holds none with this prefix.",
    )
    public_base_url: str = Field(
        default="https://benchlet.com/incidentlib/app",
        description=(
            "The reader's site's base: a published case's `url` is this followed by `/cases/{id}`"
            " (a value ending in `/cases/`, as older settings did, is read as the base before it)."
        ),
    )
    site_note: dict[str, str] = Field(
        default={},
        description="A line each listing of the reader's site ends with, after the summing-up, by language "
        '(JSON: `{"ko": "…", "en": "…"}`): who else reads the library, say, as the seed listing names the '
        "checker whose checks rest on such reports. A language left out has none.",
    )
    site_licence: str = Field(
        default="CC BY 4.0",
        description="The licence of the library's own texts, as the reader's site's footer and its sources page "
        "name it (the sources' texts keep their own, which that page lists).",
    )
    site_licence_url: str = Field(
        default="https://creativecommons.org/licenses/by/4.0/",
        description="Where the licence of `site_licence` is read: an http(s) address the footer links to.",
    )
    required_languages: list[str] = Field(
        default=["en"],
        description="Languages every narrative field of a published case must have.",
    )
    web_user_header: str | None = Field(
        default=None,
        description="The web page trusts this request header (set by a reverse proxy doing single sign-on) "
        "for the signed-in person's name, instead of its own sign-in. Only behind such a proxy.",
    )
    web_trusted_proxies: list[str] = Field(
        default=["127.0.0.1", "::1"],
        description="Addresses the web page takes `web_user_header` from; from any other, nobody is signed in.",
    )
    web_forwarded_from: list[str] = Field(
        default=[],
        description="Addresses of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto the web page "
        "believes (the client's address for the sign-in throttle, HTTPS for the Secure cookie). Empty: none is "
        "believed, and the throttle keys on the connection's own address.",
    )
    web_secure_cookies: bool = Field(
        default=False,
        description="Mark the session cookie Secure even on plain HTTP (behind a proxy that ends TLS). It is "
        "marked Secure anyway on a request that arrives over HTTPS.",
    )
    web_secret: SecretStr | None = Field(
        default=None,
        description="The key that signs the web page's sessions, at least 32 characters; none: one is made once "
        "and kept in the data root's .incidentlib/web-secret.",
    )

    # ------------------------------------------------------------ the tools' server (`incidentlib mcp`)
    mcp_host: str = Field(
        default="127.0.0.1",
        description="Address `incidentlib mcp --http` listens on. The server has no sign-in: an address other "
        "than a loopback one is refused unless `mcp_allow_remote` is set.",
    )
    mcp_port: int = Field(
        default=8765, ge=0, le=65535, description="Port `incidentlib mcp --http` listens on (0: a free one, printed)."
    )
    mcp_allow_remote: bool = Field(
        default=False,
        description="Let `incidentlib mcp --http` listen on an address other machines reach (behind a proxy that "
        "signs people in, say). Off: loopback only.",
    )
    mcp_max_results: int = Field(
        default=20, ge=1, le=200, description="Most results a tool's answer holds, whatever `limit` it asks for."
    )
    mcp_max_query_chars: int = Field(
        default=500, ge=10, description="Longest `search_cases` query, in characters; a longer one is refused."
    )
    mcp_max_text_chars: int = Field(
        default=8000,
        ge=100,
        description="Longest `similar_cases` text, in characters (a page of a description); a longer one is refused.",
    )

    # ------------------------------------------------------------ fetching
    user_agent: str = Field(
        default="incidentlib/0.1 (postmortem library crawler; +https://benchlet.com/incidentlib)",
        description="The User-Agent every request sends; robots.txt rules are matched against it.",
    )
    concurrency: int = Field(default=8, ge=1, le=256, description="Requests in flight at once, over all hosts.")
    per_host_concurrency: int = Field(default=1, ge=1, le=4, description="Requests in flight at once to one host.")
    per_host_delay_s: float = Field(
        default=1.0, ge=0, description="Least time between the starts of two requests to one host."
    )
    connect_timeout_s: float = Field(default=10.0, gt=0, description="Time to open a connection.")
    read_timeout_s: float = Field(default=30.0, gt=0, description="Longest wait for the next bytes of a response.")
    total_timeout_s: float = Field(
        default=120.0,
        gt=0,
        description="Longest time one source may take in all: its requests, redirects, retries and their waits "
        "(a page that never ends costs this, once; a timeout is not retried).",
    )
    max_redirects: int = Field(default=5, ge=0, le=20, description="Redirects followed before giving up.")
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries after a 429, a 5xx or a dropped connection.")
    retry_backoff_s: float = Field(
        default=2.0, ge=0, description="First wait before a retry; it doubles each time (Retry-After wins when given)."
    )
    max_retry_wait_s: float = Field(
        default=300.0,
        ge=0,
        description="A Retry-After longer than this defers the whole host to the next run instead of waiting.",
    )
    max_feed_entries: int = Field(
        default=1000,
        ge=1,
        description="Entries `discover` reads of one feed, the first (newest) ones; the rest are left.",
    )
    max_body_bytes: int = Field(
        default=20_000_000, ge=1024, description="Largest decoded body read; a larger one is cut off and reported."
    )
    allow_private_hosts: bool | tuple[IPv4Network | IPv6Network, ...] = Field(
        default=False,
        description="Allow requests to non-public addresses: false (refused), true (all but link-local and "
        "cloud metadata), or the networks allowed, comma-separated (127.0.0.0/8,10.1.0.0/16).",
    )
    stand_in_hosts: dict[str, str] = Field(
        default={},
        description="Hosts answered by local stand-ins instead of the network (the offline demo's): a JSON object of "
        'host to base URL, {"github.com": "http://127.0.0.1:8001"}. Each request to such a host goes to its base, '
        "path and query kept, through the address guard; records still name the host.",
    )
    obey_robots: bool = Field(default=True, description="Obey robots.txt (turn off only for your own sites).")
    max_crawl_delay_s: float = Field(
        default=60.0, ge=0, description="A robots.txt Crawl-delay longer than this fails the host's sources instead."
    )
    crawl_task_groups: int = Field(
        default=4, ge=1, le=64, description="Prefect tasks a crawl is split into (each a group of hosts)."
    )
    # Balanced (trafilatura's own default) over precision: a reviewer deletes a stray line
    # more easily than they find a paragraph that never reached the draft.
    extract_favor: str = Field(
        default="balanced",
        pattern=r"^(precision|balanced|recall)$",
        description="What the HTML extractor favours when unsure: precision, balanced or recall.",
    )
    # Precision first: a wrong field costs a writer more than an empty one, who must notice it first.
    draft_confidence_threshold: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Confidence a drafted passage needs to be written into its field; one below it is kept "
        "as a suggestion beside the field, with its evidence (0 writes every passage the rules find; 0.9 only "
        "the sections under a heading that names the field).",
    )
    draft_finder: bool = Field(
        default=True,
        description="Rank each passage field's candidate sentences with the finder (a model learned from reviewed "
        "cases) and offer its best beside the field; the library's own model once `incidentlib learn` made one, "
        "the packaged one until then. Off: the rules alone draft and suggest.",
    )

    # ------------------------------------------------------------ archiving
    wayback_url: str = Field(
        default="https://web.archive.org",
        description="Base URL of the Wayback Machine (or a compatible service, or the local stand-in).",
    )
    wayback_public_url: str = Field(
        default="https://web.archive.org",
        description="Base URL of the archived links written into records (BASE/web/TIMESTAMP/URL), which the "
        "review page frames: the Wayback Machine's, or a stand-in's own while it runs (the demo's).",
    )
    wayback_access_key: SecretStr | None = Field(
        default=None, description="Archive account access key (S3-like; printable ASCII, no spaces or colon)."
    )
    wayback_secret_key: SecretStr | None = Field(
        default=None, description="Archive account secret key (printable ASCII, no spaces)."
    )
    # The Save Page Now 2 document (2026): about 7 captures a minute is what an account sustains.
    captures_per_minute: float = Field(default=7.0, gt=0, description="Capture submissions a minute, at most.")
    # The index allows 30 a minute; its maintainers ask clients to stay a fifth under it (edgi's client does).
    cdx_per_minute: float = Field(default=24.0, gt=0, description="Index (CDX) queries a minute, at most.")
    status_polls_per_minute: float = Field(
        default=30.0, gt=0, description="Looks at capture jobs a minute, at most (they have a limit of their own)."
    )
    capture_sessions: int = Field(
        default=3,
        ge=1,
        le=20,
        description="Capture jobs in progress at once, at most (the account's own may be fewer).",
    )
    reuse_capture_within_s: float = Field(
        default=30 * 86400.0, ge=0, description="An existing capture younger than this is reused, not made again."
    )
    poll_interval_s: float = Field(
        default=3.0, gt=0, description="First wait before looking at a capture job; the waits grow as it ages."
    )
    poll_max_interval_s: float = Field(default=20.0, gt=0, description="Longest wait between two looks at a job.")
    poll_timeout_s: float = Field(
        default=180.0, gt=0, description="How long one run waits on a job; a later run picks it up again."
    )
    session_wait_s: float = Field(
        default=300.0,
        ge=0,
        description="How long a run waits for a free capture session before leaving the rest for the next run.",
    )
    breaker_backoff_s: float = Field(
        default=60.0,
        ge=0,
        description="Pause for every archive request after a 429 or a refused connection (doubles while they go on).",
    )
    wayback_timeout_s: float = Field(default=30.0, gt=0, description="Timeout of one request to the archive.")
    wayback_connect_timeout_s: float = Field(
        default=5.0,
        gt=0,
        description="Time to open a connection to the archive (a refused one is known at once; three in a row "
        "and the run takes the archive for out).",
    )
    archive_run_s: float = Field(
        default=3000.0,
        gt=0,
        description="Longest a run spends on the archive (an archive run, a crawl's archiving, a refresh): no call "
        "waits past it, jobs still running are polled by the next run, and the sources left wait for it.",
    )
    max_capture_attempts: int = Field(
        default=5,
        ge=1,
        description="Attempts at a capture whose page answered with trouble of its own before it is marked failed "
        "(the archive's or the account's trouble uses none).",
    )
    in_run_retries: int = Field(
        default=2, ge=0, le=10, description="Further tries within one run after a retry-worthy failure."
    )

    capture_limit: str | None = Field(
        default=None,
        description="Name of a Prefect global concurrency limit every capture also takes a slot of, "
        "for when several processes or machines capture at once (none: the local limiter alone).",
    )

    # ------------------------------------------------------------ the writer assist (pipeline.assist)
    llm_url: str | None = Field(
        default=None,
        description="An OpenAI-compatible API's base URL (http://127.0.0.1:11434/v1 for a local Ollama); "
        "none: no assist, and nothing mentions a model.",
    )
    llm_model: str | None = Field(default=None, description="The model the assist asks.")
    llm_api_key: SecretStr | None = Field(
        default=None, description="The API's key, when it wants one (never logged, never in a record)."
    )
    llm_timeout_s: float = Field(
        default=120.0, gt=0, description="Longest wait for one answer (each retry has as long again)."
    )
    llm_max_retries: int = Field(
        default=2, ge=0, le=10, description="Retries after a timeout, 429 or 5xx (a Retry-After is honoured)."
    )
    llm_requests_per_minute: float = Field(
        default=20.0, gt=0, description="Requests a minute to the API, at most, retries included, for this process."
    )
    llm_temperature: float | None = Field(
        default=0.0, ge=0, le=2, description="Sampling temperature; empty: not sent (models that accept none)."
    )
    llm_max_answer_tokens: int = Field(default=2000, ge=100, description="Longest answer asked for, in tokens.")
    llm_token_limit_field: str = Field(
        default="max_tokens",
        pattern=r"^(max_tokens|max_completion_tokens)$",
        description="How the answer's limit is sent: max_tokens (local servers), or max_completion_tokens.",
    )
    llm_tokens_per_draft: int = Field(
        default=16000, ge=1000, description="Tokens (question and answer) one draft may cost in one run."
    )
    llm_tokens_per_run: int = Field(default=200000, ge=1000, description="Tokens one run may cost in all.")
    assist_after_crawl: bool = Field(
        default=False, description="After a crawl, ask the model for what the new and updated drafts lack."
    )

    @property
    def assist_configured(self) -> bool:
        return bool(self.llm_url and self.llm_model)

    # ------------------------------------------------------------ running as a service
    crawl_schedule: str | None = Field(
        default="0 * * * *",
        description="When `serve` crawls: a cron line or an interval (90s, 15m, 1h, 7d); empty: never.",
    )
    archive_schedule: str | None = Field(
        default="30 * * * *", description="When `serve` archives the sources waiting for capture."
    )
    refresh_schedule: str | None = Field(default="0 4 * * 1", description="When `serve` checks every link (weekly).")
    discover_schedule: str | None = Field(
        default="50 5 * * *",
        description="When `serve` reads the feeds of sources/feeds.yaml (daily, ten minutes before a crawl).",
    )
    promote_schedule: str | None = Field(
        default=None,
        description="When `serve` promotes approved drafts; besides, every approval asks for a promotion run.",
    )
    site_schedule: str | None = Field(
        default="30 4 * * *",
        description="When `serve` rebuilds the reader's site (daily: a case page cites its retrieval date); "
        "besides, every promotion that publishes something rebuilds it.",
    )
    learn_schedule: str | None = Field(
        default="0 5 * * 0",
        description="When `serve` retrains the finder from the library's reviews (`incidentlib learn`, weekly); "
        "a model no better than the one in use is refused, and the one in use stays.",
    )
    server_port: int = Field(
        default=4200,
        ge=1,
        le=65535,
        description="Port of the Prefect server `serve` starts when no PREFECT_API_URL is set.",
    )
    server_startup_timeout_s: float = Field(
        default=90.0, gt=0, description="How long `serve` waits for the Prefect server it starts to answer."
    )

    @field_validator(
        "crawl_schedule",
        "archive_schedule",
        "refresh_schedule",
        "promote_schedule",
        "discover_schedule",
        "site_schedule",
        "learn_schedule",
    )
    @classmethod
    def _schedule(cls, value: str | None) -> str | None:
        value = (value or "").strip()
        if not value:
            return None
        if not (INTERVAL.fullmatch(value) or len(value.split()) == 5):
            raise ValueError(f"{value!r} is neither a cron line of five fields nor an interval like 90s, 15m, 1h or 7d")
        if interval_seconds(value) == 0:
            raise ValueError(f"{value!r}: an interval must be longer than nothing")
        return value

    @field_validator("allow_private_hosts", mode="before")
    @classmethod
    def _private_networks(cls, value: object) -> object:
        """`true`/`false` as before, or networks: `127.0.0.0/8,10.1.0.0/16` (or a JSON list of them)."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text.lower() in ("", "0", "false", "no", "off"):
            return False
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        parts = json.loads(text) if text.startswith("[") else [p.strip() for p in text.split(",") if p.strip()]
        try:
            return tuple(ip_network(part) for part in parts)
        except ValueError as exc:
            raise ValueError(f"{exc}: expected true, false or networks such as 127.0.0.0/8,10.1.0.0/16") from None

    @field_validator("stand_in_hosts")
    @classmethod
    def _stand_ins(cls, value: dict[str, str]) -> dict[str, str]:
        hosts = {}
        for host, base in value.items():
            parts = urlsplit(base)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/"):
                raise ValueError(f"{host}: {base!r} is not a base URL such as http://127.0.0.1:8001")
            hosts[host.strip().lower().rstrip(".")] = base.rstrip("/")
        return hosts

    @field_validator("site_licence_url")
    @classmethod
    def _licence_url(cls, value: str) -> str:
        value = value.strip()
        if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
            raise ValueError(
                f"{value!r} is not an http(s) address such as https://creativecommons.org/licenses/by/4.0/"
            )
        return value

    @field_validator("wayback_public_url")
    @classmethod
    def _public_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
            raise ValueError(f"{value!r} is not an http(s) base URL such as https://web.archive.org")
        return value

    @field_validator("wayback_access_key", "wayback_secret_key")
    @classmethod
    def _key(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        # The keys go into one header, `LOW access:secret`: a space, a control character or a
        # letter outside ASCII there makes the HTTP library raise an error that quotes the whole
        # header, secret included. Checked here, once, and said without the value.
        if value is None or not value.get_secret_value():
            return None
        text = value.get_secret_value()
        if not _KEY.fullmatch(text):
            raise ValueError("must be printable ASCII without spaces (check for a stray space or newline)")
        if info.field_name == "wayback_access_key" and ":" in text:
            raise ValueError("must not hold a colon (the header joins the two keys with one)")
        return value

    @field_validator("llm_url")
    @classmethod
    def _llm_url(cls, value: str | None) -> str | None:
        value = (value or "").strip()
        if not value:
            return None
        if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
            raise ValueError(f"{value!r} is not an http(s) URL (an OpenAI-compatible API's base, ending in /v1)")
        return value.rstrip("/")

    @field_validator("web_user_header", "web_secret", "capture_limit", "llm_model", "llm_temperature", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        # An empty line in incidentlib.env (`INCIDENTLIB_CAPTURE_LIMIT=`) is no value, as the default is.
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("llm_api_key")
    @classmethod
    def _llm_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        if not _KEY.fullmatch(value.get_secret_value()):
            raise ValueError("must be printable ASCII without spaces (check for a stray space or newline)")
        return value

    @field_validator("root")
    @classmethod
    def _absolute_root(cls, value: Path) -> Path:
        return value.expanduser().resolve()


def settings_files(root: Path) -> list[Path]:
    """The settings files the settings of data root `root` read, the one that wins first: the data
    root's incidentlib.env, then the working folder's when it is another file (either may be missing)."""
    own = root / SETTINGS_FILE
    here = Path(SETTINGS_FILE).resolve()
    return [own] if here == own.resolve() else [own, here]


def _shown_default(value: object) -> str:
    """A default as a settings file spells it: a switch as true or false, a list as JSON, none as nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)


def settings_file_text() -> str:
    """The settings file `incidentlib init` writes: every setting (but the data root) commented out
    at its default, with its help above it; no value of its own, so no secret."""
    import textwrap

    lines = [
        "# incidentlib's settings for this data root, one NAME=value a line; a line starting with # is not read.",
        "# Every command given this data root (--root, INCIDENTLIB_ROOT, or run in it) and every flow run on it",
        "# reads this file; a variable of the same name in the environment wins over it. Each setting is shown",
        "# at its default: remove the # and change the value to set it. `incidentlib config` prints the settings",
        "# in force and where each came from; docs/settings.md tells them all. Git ignores this file (see",
        "# .gitignore): the archive's keys may stand here, and nowhere in the records.",
    ]
    for name, info in Settings.model_fields.items():
        if name == "root":
            continue
        lines.append("")
        lines += textwrap.wrap(info.description or "", width=100, initial_indent="# ", subsequent_indent="# ")
        lines.append(f"# INCIDENTLIB_{name.upper()}={_shown_default(info.default)}")
    return "\n".join(lines) + "\n"
