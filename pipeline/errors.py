"""Every error incidentlib raises on purpose, as one tree.

    IncidentlibError                 root: catch this to catch anything we raise
    ├── SettingsError                a setting has a value we cannot use
    ├── RecordError                  a record (file) is not what the format says
    │   ├── DuplicateSource          a URL already in the registry
    │   ├── RecordNotFound           no record with that id
    │   ├── InvalidRecord            the record fails validation (carries every fault)
    │   └── InvalidId                an id that is malformed or would leave its folder
    ├── StoreError                   the data root could not be read or written
    │   └── ConflictError            the record changed since it was read (compare-and-swap lost)
    ├── VocabularyError              the vocabulary file itself is broken
    ├── ReviewError                  a review step the rules do not allow (self-review, incomplete, ...)
    ├── WaybackError                 the archive answered something the client cannot use
    │   ├── WaybackAuthError         no keys, or keys the archive refuses (401)
    │   ├── WaybackThrottled         429: every archive call pauses behind the breaker
    │   └── WaybackUnavailable       5xx, a timeout or a dropped connection (the capture may exist)
    ├── FetchError                   a source could not be fetched; `reason` is a short code
    │   └── PrivateAddressRefused    the URL (or a redirect) leads to a non-public address
    └── ExtractError                 a fetched document could not be turned into text
        ├── UnsupportedContent       a kind of document incidentlib does not read
        ├── UnreadableDocument       a PDF or page too broken to read
        └── EmptyDocument            a document with no text in it

Later stages add their own subtrees (fetch, wayback, extract, review) under the root.
Each error names what it concerns (a path, a field, a record id) so that the command
line can print it as one line and a person knows where to look.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ConflictError",
    "DuplicateSource",
    "EmptyDocument",
    "ExtractError",
    "Fault",
    "FetchError",
    "IncidentlibError",
    "InvalidId",
    "InvalidRecord",
    "PrivateAddressRefused",
    "RecordError",
    "RecordNotFound",
    "ReviewError",
    "SettingsError",
    "StoreError",
    "UnreadableDocument",
    "UnsupportedContent",
    "VocabularyError",
    "WaybackAuthError",
    "WaybackError",
    "WaybackThrottled",
    "WaybackUnavailable",
]


class IncidentlibError(Exception):
    """Root of every error incidentlib raises on purpose."""


class SettingsError(IncidentlibError):
    """A setting has a value the pipeline cannot use."""


class VocabularyError(IncidentlibError):
    """The controlled vocabulary file is malformed."""


class ReviewError(IncidentlibError):
    """A review step the rules do not allow; the message says which rule and what is missing."""


class WaybackError(IncidentlibError):
    """The archive answered something the client cannot use. Messages never hold the keys."""


class WaybackAuthError(WaybackError):
    """No keys, or keys the archive refuses."""


class CaptureLimitError(WaybackError):
    """The Prefect global concurrency limit for captures (INCIDENTLIB_CAPTURE_LIMIT) is missing or
    cannot be reached: a fault of the set-up, not of a source, so no capture attempt is counted."""


class WaybackThrottled(WaybackError):
    """429: the breaker is open and every archive call waits."""


class WaybackUnavailable(WaybackError):
    """5xx, a timeout or a dropped connection: the capture may or may not exist."""


class FetchError(IncidentlibError):
    """A source could not be fetched. `reason` is a short code recorded on the source
    (`http-404`, `robots`, `too-large`, `timeout`, ...); the message is the sentence."""

    def __init__(self, url: str, reason: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url
        self.reason = reason


class PrivateAddressRefused(FetchError):
    def __init__(self, url: str, host: str, address: str) -> None:
        super().__init__(
            url,
            "private-address",
            f"{host} resolves to {address}, a non-public address; refused "
            "(allow with INCIDENTLIB_ALLOW_PRIVATE_HOSTS=1)",
        )
        self.host = host
        self.address = address


class ExtractError(IncidentlibError):
    """A fetched document could not be turned into text; the message says why."""

    reason = "failed"  # recorded on the source as extract-<reason>


class UnsupportedContent(ExtractError):
    """Neither HTML, Markdown, plain text nor PDF (or binary bytes served as text)."""

    reason = "unsupported"


class UnreadableDocument(ExtractError):
    """A document of a known kind too broken to read."""

    reason = "unreadable"


class EmptyDocument(ExtractError):
    """A document with no text in it."""

    reason = "empty"


class RecordError(IncidentlibError):
    """A record is missing, malformed or misnamed."""


class DuplicateSource(RecordError):
    """A source URL that the registry already holds (after canonicalisation)."""


class RecordNotFound(RecordError):
    def __init__(self, kind: str, record_id: str, path: Path) -> None:
        super().__init__(f"{path}: no {kind} with id {record_id!r}")
        self.kind = kind
        self.record_id = record_id
        self.path = path


class InvalidId(RecordError):
    """An id that does not match the id pattern, or that would resolve outside its folder."""


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
    """The data root could not be read or written."""


class ConflictError(StoreError):
    """Someone else wrote the record after we read it; re-read and try again."""
