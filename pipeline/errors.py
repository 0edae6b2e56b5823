"""Every error incidentlib raises on purpose, as one tree.

    IncidentlibError                 root: catch this to catch anything we raise
    ├── SettingsError                a setting has a value we cannot use (`name`)
    ├── VocabularyError              the vocabulary file itself is broken
    ├── RecordError                  a record (file) is not what the format says
    │   ├── DuplicateSource          a URL already in the registry (`url`, `where`)
    │   ├── RecordNotFound           no record with that id (`kind`, `record_id`, `path`)
    │   ├── InvalidRecord            the record fails validation (`faults`)
    │   └── InvalidId                an id that is malformed or would leave its folder (`value`)
    ├── StoreError                   the data root could not be read or written (`path`)
    │   └── ConflictError            the record changed since it was read (compare-and-swap lost)
    ├── LockBusy                     another process holds a lock we would not wait for (`path`)
    ├── LookupRefused                a tool's question over a limit, or of a case the library lacks
    ├── ReviewError                  a review step the rules do not allow (`draft_id`)
    │   └── ReviewerError            a reviewer account refused, or its file unreadable (`field`, `path`)
    ├── WaybackError                 the archive answered something the client cannot use (`url`)
    │   ├── WaybackAuthError         no keys, or keys the archive refuses (401)
    │   ├── CaptureLimitError        the shared capture limit is missing or unreachable (`limit`)
    │   ├── WaybackThrottled         429: every archive call pauses behind the breaker (`pause`)
    │   ├── WaybackUnavailable       5xx, a timeout or a dropped connection (the capture may exist; `unreached`)
    │   │   ├── WaybackNotAsked      not asked: the archive is out this run, or the wait passes its deadline
    │   │   └── WaybackCongested     the client's own connections stayed busy: no trouble of the service's
    │   ├── WaybackExcluded          playback answered the archive's exclusion page: no capture shown
    │   └── ArchivedErrorPage        playback replayed a capture of an error page (`status`: the page's)
    ├── AssistError                  the language model gave no usable answer (`reason`, `draft_id`)
    ├── FetchError                   a source could not be fetched (`url`, `reason`)
    │   └── PrivateAddressRefused    the URL (or a redirect) leads to a non-public address
    └── ExtractError                 a fetched document could not be turned into text (`url`, `reason`)
        ├── UnsupportedContent       a kind of document incidentlib does not read
        ├── UnreadableDocument       a PDF or page too broken to read
        └── EmptyDocument            a document with no text in it

Each error names what it concerns (a path, a field, a record id, a URL) in its message,
so the command line prints it as one line and a person knows where to look, and keeps
it as an attribute, so code that catches it need not parse the message.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.reasons import Reason

__all__ = [
    "ArchivedErrorPage",
    "AssistError",
    "CaptureLimitError",
    "ConflictError",
    "DuplicateSource",
    "EmptyDocument",
    "ExtractError",
    "Fault",
    "FetchError",
    "IncidentlibError",
    "InvalidId",
    "InvalidRecord",
    "LockBusy",
    "LookupRefused",
    "PrivateAddressRefused",
    "RecordError",
    "RecordNotFound",
    "ReviewError",
    "ReviewerError",
    "SettingsError",
    "StoreError",
    "UnreadableDocument",
    "UnsupportedContent",
    "VocabularyError",
    "WaybackAuthError",
    "WaybackCongested",
    "WaybackError",
    "WaybackExcluded",
    "WaybackNotAsked",
    "WaybackThrottled",
    "WaybackUnavailable",
]


class IncidentlibError(Exception):
    """Root of every error incidentlib raises on purpose."""


class SettingsError(IncidentlibError):
    """A setting has a value the pipeline cannot use; `name` is the variable or option, when known."""

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class VocabularyError(IncidentlibError):
    """The controlled vocabulary file is malformed."""


class ReviewError(IncidentlibError):
    """A review step the rules do not allow; the message says which rule and what is missing."""

    def __init__(self, message: str, *, draft_id: str | None = None) -> None:
        super().__init__(f"{draft_id}: {message}" if draft_id else message)
        self.draft_id = draft_id


class ReviewerError(ReviewError):
    """An account of a reviewer of the web page that the rules refuse (`field`: `name` or `password`),
    or a reviewers file that cannot be read (`path`). Messages never hold a password or a hash."""

    def __init__(self, message: str, *, field: str | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.path = path


class WaybackError(IncidentlibError):
    """The archive answered something the client cannot use. Messages never hold the keys.

    `url` is what the call concerned: the archive's endpoint, or the source URL being captured.
    """

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class WaybackAuthError(WaybackError):
    """No keys, or keys the archive refuses."""


class CaptureLimitError(WaybackError):
    """The Prefect global concurrency limit for captures (INCIDENTLIB_CAPTURE_LIMIT) is missing or
    cannot be reached: a fault of the set-up, not of a source, so no capture attempt is counted."""

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class WaybackThrottled(WaybackError):
    """429: the breaker is open and every archive call waits `pause` seconds."""

    def __init__(self, message: str, *, url: str | None = None, pause: float = 0.0) -> None:
        super().__init__(message, url=url)
        self.pause = pause


class WaybackUnavailable(WaybackError):
    """5xx, a timeout or a dropped connection: the capture may or may not exist.

    `unreached` when no connection reached the service, tried and tried again (refused, not
    opened in time, or closed before any answer): the archive cannot be reached. Otherwise it is
    the service's passing trouble (a 5xx, an answer cut off mid-way, no answer in time)."""

    def __init__(self, message: str, *, url: str | None = None, unreached: bool = False) -> None:
        super().__init__(message, url=url)
        self.unreached = unreached


class WaybackExcluded(WaybackError):
    """The archive's playback answered its own exclusion page ("This URL has been excluded from
    the Wayback Machine"): it will not show captures of the URL, and the page is no capture."""


class ArchivedErrorPage(WaybackError):
    """Playback replayed a capture of an error page (an archived 404, 429, 5xx: the page's history,
    not the service's trouble). `status` is the archived page's status."""

    def __init__(self, message: str, *, status: int, url: str | None = None) -> None:
        super().__init__(message, url=url)
        self.status = status


class WaybackNotAsked(WaybackUnavailable):
    """The call was not made: this run knows the archive is out, or waiting for the breaker or a
    rate's slot would pass the run's deadline (`archive_run_s`). Nothing reached the service."""


class WaybackCongested(WaybackUnavailable):
    """The client's own connections stayed busy (its pool): the client's congestion, never the
    service's trouble, so it trips no breaker and counts toward no outage."""


class AssistError(IncidentlibError):
    """The language model of the writer assist gave no usable answer: `reason` (llm-timeout,
    llm-rate-limited, llm-cut-off, ...) is kept on the draft. Messages never hold the API's key."""

    def __init__(self, reason: Reason, message: str, *, draft_id: str | None = None) -> None:
        super().__init__(f"{draft_id}: {message}" if draft_id else message)
        self.reason = reason
        self.detail = message
        self.draft_id = draft_id


class FetchError(IncidentlibError):
    """A source could not be fetched. `reason` is recorded on the source (`http-404`, `robots`,
    `too-large`, `timeout`, ...); `detail` is the sentence behind it, `status` the HTTP status."""

    def __init__(self, url: str, reason: Reason, message: str, *, status: int | None = None) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.reason = reason
        self.detail = message
        self.status = status  # the HTTP status the server answered with, when it answered


class PrivateAddressRefused(FetchError):
    def __init__(self, url: str, host: str, address: str) -> None:
        super().__init__(
            url,
            Reason.PRIVATE_ADDRESS,
            f"{host} resolves to {address}, a non-public address; refused (allow with INCIDENTLIB_ALLOW_PRIVATE_HOSTS)",
        )
        self.host = host
        self.address = address


class ExtractError(IncidentlibError):
    """A fetched document could not be turned into text; the message says why.

    `reason` is what the source records (`extract-empty`, ...); `url` the document's URL.
    """

    reason = Reason.EXTRACT_FAILED

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(f"{url}: {message}" if url else message)
        self.url = url


class UnsupportedContent(ExtractError):
    """Neither HTML, Markdown, plain text nor PDF (or binary bytes served as text)."""

    reason = Reason.EXTRACT_UNSUPPORTED


class UnreadableDocument(ExtractError):
    """A document of a known kind too broken to read."""

    reason = Reason.EXTRACT_UNREADABLE


class EmptyDocument(ExtractError):
    """A document with no text in it."""

    reason = Reason.EXTRACT_EMPTY


class RecordError(IncidentlibError):
    """A record is missing, malformed or misnamed."""


class DuplicateSource(RecordError):
    """A source URL that the registry already holds (after canonicalisation), at `where` (file:line)."""

    def __init__(self, url: str, where: str) -> None:
        super().__init__(f"{url} is already registered at {where}")
        self.url = url
        self.where = where


class RecordNotFound(RecordError):
    def __init__(self, kind: str, record_id: str, path: str) -> None:
        super().__init__(f"{path}: no {kind} with id {record_id!r}")
        self.kind = kind
        self.record_id = record_id
        self.path = path


class InvalidId(RecordError):
    """An id that does not match the id pattern, or that would resolve outside its folder."""

    def __init__(self, message: str, *, value: str) -> None:
        super().__init__(message)
        self.value = value


@dataclass(frozen=True)
class Fault:
    """One problem with one field of one record file: printed as `path: field: problem`."""

    path: str
    field: str
    problem: str

    def __str__(self) -> str:
        # One fault, one line, whatever a file name, key or value holds.
        return ": ".join(_one_line(part) for part in (self.path, self.field, self.problem))


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


class InvalidRecord(RecordError):
    def __init__(self, faults: list[Fault]) -> None:
        self.faults = faults
        first = str(faults[0]) if faults else "invalid record"
        more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        super().__init__(first + more)


class StoreError(IncidentlibError):
    """The data root could not be read or written; `path` is the file or folder concerned."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class ConflictError(StoreError):
    """Someone else wrote the record after we read it; re-read and try again."""


class LockBusy(IncidentlibError):
    """Another process holds the lock at `path` and this one would not (or could no longer) wait.

    Not a StoreError: nothing is wrong with the data root; someone else is at work in it.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class LookupRefused(IncidentlibError):
    """A question to the library's lookup (pipeline.lookup: the tools' server) that it will not answer: a
    query or text over its size, a limit out of range, an unknown term, or a case the library does not hold.
    Its message is one line a tool's user can act on."""
