"""Why a source could not be fetched, read, archived or checked: one vocabulary, used everywhere.

The records keep these codes (`origin.failure.reason`, `sources[].archive.reason`, a link's
`reason`), the command line filters on them, the manual lists them (docs/crawl.md,
docs/assist.md), and a test checks that the three agree. Each code has a one-line meaning in `MEANINGS`.

Codes stand for what the pipeline does about a failure, not for every answer a server can
give: the HTTP statuses with a meaning of their own have a code each, the rest are grouped
(`http-4xx`, `http-5xx`) and the exact status is kept beside the code.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["MEANINGS", "Reason"]


class Reason(StrEnum):
    # ---------------------------------------------------------- fetching a source
    HTTP_400 = "http-400"
    HTTP_401 = "http-401"
    HTTP_403 = "http-403"
    HTTP_404 = "http-404"
    HTTP_405 = "http-405"
    HTTP_406 = "http-406"
    HTTP_408 = "http-408"
    HTTP_410 = "http-410"
    HTTP_429 = "http-429"
    HTTP_451 = "http-451"
    HTTP_500 = "http-500"
    HTTP_502 = "http-502"
    HTTP_503 = "http-503"
    HTTP_504 = "http-504"
    HTTP_4XX = "http-4xx"
    HTTP_5XX = "http-5xx"
    HTTP_UNEXPECTED = "http-unexpected"
    ROBOTS = "robots"
    TIMEOUT = "timeout"
    TOO_LARGE = "too-large"
    REDIRECT_LOOP = "redirect-loop"
    TOO_MANY_REDIRECTS = "too-many-redirects"
    PRIVATE_ADDRESS = "private-address"
    UNSUPPORTED_TYPE = "unsupported-type"
    UNSUPPORTED_SCHEME = "unsupported-scheme"
    BAD_RESPONSE = "bad-response"
    INVALID_URL = "invalid-url"
    CONNECT_ERROR = "connect-error"
    TRANSPORT_ERROR = "transport-error"
    DEFERRED = "deferred"
    # ---------------------------------------------------------- reading what was fetched
    EXTRACT_FAILED = "extract-failed"
    EXTRACT_UNSUPPORTED = "extract-unsupported"
    EXTRACT_UNREADABLE = "extract-unreadable"
    EXTRACT_EMPTY = "extract-empty"
    # ---------------------------------------------------------- the crawl's own
    INVALID_DRAFT = "invalid-draft"
    REJECTED = "rejected"
    MERGED = "merged"
    FEED_TEXT = "feed-text"
    NOT_A_FEED = "not-a-feed"
    # ---------------------------------------------------------- the writer assist
    LLM_BUDGET = "llm-budget"
    LLM_TIMEOUT = "llm-timeout"
    LLM_RATE_LIMITED = "llm-rate-limited"
    LLM_SERVER_ERROR = "llm-server-error"
    LLM_UNREACHABLE = "llm-unreachable"
    LLM_REFUSED = "llm-refused"
    LLM_CUT_OFF = "llm-cut-off"
    LLM_INVALID_ANSWER = "llm-invalid-answer"
    INTERNAL_ERROR = "internal-error"
    # ---------------------------------------------------------- archiving: waiting
    NOT_TRIED = "not-tried"
    NO_KEYS = "no-keys"
    BAD_KEYS = "bad-keys"
    NO_CAPTURE_LIMIT = "no-capture-limit"
    THROTTLED = "throttled"
    SUBMITTING = "submitting"
    JOB_SUBMITTED = "job-submitted"
    JOB_PENDING = "job-pending"
    JOB_EXPIRED = "job-expired"
    SUBMIT_FAILED = "submit-failed"
    CAPTURE_NOT_YET_VISIBLE = "capture-not-yet-visible"
    CAPTURED_TODAY_NOT_YET_VISIBLE = "captured-today-not-yet-visible"
    SERVICE_UNREACHABLE = "service-unreachable"
    SERVICE_ERROR = "service-error"
    ACCOUNT_QUOTA = "account-quota"
    HOST_QUOTA = "host-quota"
    CAPTURE_DELAYED = "capture-delayed"
    # ---------------------------------------------------------- archiving: the service's own codes (status_ext)
    BAD_GATEWAY = "bad-gateway"
    BROWSING_TIMEOUT = "browsing-timeout"
    CANNOT_FETCH = "cannot-fetch"
    CAPTURE_LOCATION_ERROR = "capture-location-error"
    CELERY = "celery"
    GATEWAY_TIMEOUT = "gateway-timeout"
    INTERNAL_SERVER_ERROR = "internal-server-error"
    INVALID_SERVER_RESPONSE = "invalid-server-response"
    JOB_FAILED = "job-failed"
    NO_BROWSERS_AVAILABLE = "no-browsers-available"
    PROTOCOL_ERROR = "protocol-error"
    PROXY_ERROR = "proxy-error"
    READ_TIMEOUT = "read-timeout"
    SERVICE_UNAVAILABLE = "service-unavailable"
    SOFT_TIME_LIMIT_EXCEEDED = "soft-time-limit-exceeded"
    TOO_MANY_REQUESTS = "too-many-requests"
    USER_SESSION_LIMIT = "user-session-limit"
    TOO_MANY_DAILY_CAPTURES = "too-many-daily-captures"
    TOO_MANY_CAPTURES = "too-many-captures"
    NOT_FOUND = "not-found"
    NO_ACCESS = "no-access"
    BLOCKED_URL = "blocked-url"
    INVALID_URL_SYNTAX = "invalid-url-syntax"
    INVALID_HOST_RESOLUTION = "invalid-host-resolution"
    UNAUTHORIZED = "unauthorized"
    BLOCKED = "blocked"
    FILESIZE_LIMIT = "filesize-limit"
    BAD_REQUEST = "bad-request"
    METHOD_NOT_ALLOWED = "method-not-allowed"
    FTP_ACCESS_DENIED = "ftp-access-denied"
    NOT_IMPLEMENTED = "not-implemented"
    HTTP_VERSION_NOT_SUPPORTED = "http-version-not-supported"
    BANDWIDTH_LIMIT_EXCEEDED = "bandwidth-limit-exceeded"
    NETWORK_AUTHENTICATION_REQUIRED = "network-authentication-required"
    BLOCKED_CLIENT_IP = "blocked-client-ip"
    NO_CAPTURES = "no-captures"
    SPN_UNKNOWN = "spn-unknown"
    ARCHIVED_ERROR_PAGE = "archived-error-page"
    ARCHIVED_SERVER_ERROR = "archived-server-error"
    # ---------------------------------------------------------- keeping links current
    INDEX_UNAVAILABLE = "index-unavailable"
    CAPTURE_UNREADABLE = "capture-unreadable"
    CAPTURE_FAILED = "capture-failed"
    CAPTURE_NOT_NEWER = "capture-not-newer"
    BLOCKED_SITE = "blocked-site"
    INDEX_ROW_UNREADABLE = "index-row-unreadable"
    CAPTURE_NOT_INDEXED = "capture-not-indexed"

    @classmethod
    def for_status(cls, status: int) -> Reason:
        """The code of an HTTP status a source answered with (other than 200, a redirect or 304)."""
        try:
            return cls(f"http-{status}")
        except ValueError:
            pass
        if 400 <= status < 500:
            return cls.HTTP_4XX
        if 500 <= status < 600:
            return cls.HTTP_5XX
        return cls.HTTP_UNEXPECTED

    @classmethod
    def parse(cls, value: object) -> object:
        """A code as records of earlier versions wrote it, in today's vocabulary.

        `http-418` was written for every status; `gave-up:<code>` for a capture given up
        after its last attempt (the attempts count says so now); `archived-http-404` for a
        capture of an error page. Anything else is left for validation to judge.
        """
        if not isinstance(value, str) or value in cls._value2member_map_:
            return value
        if value.startswith("gave-up:"):
            return cls.parse(value.removeprefix("gave-up:"))
        if value.startswith("archived-http-"):
            return cls.ARCHIVED_ERROR_PAGE
        if value.startswith("http-") and value[5:].isdigit():
            return cls.for_status(int(value[5:]))
        return value


MEANINGS: dict[Reason, str] = {
    Reason.HTTP_400: "the server refused the request as malformed",
    Reason.HTTP_401: "the page asks for credentials",
    Reason.HTTP_403: "access refused: often a bot block, not a dead page",
    Reason.HTTP_404: "not found",
    Reason.HTTP_405: "the server does not allow GET on this URL",
    Reason.HTTP_406: "the server has no representation incidentlib accepts",
    Reason.HTTP_408: "the server gave up waiting for the request",
    Reason.HTTP_410: "gone for good",
    Reason.HTTP_429: "too many requests, still after the retries allowed",
    Reason.HTTP_451: "unavailable for legal reasons",
    Reason.HTTP_500: "server error, still after the retries allowed",
    Reason.HTTP_502: "bad gateway, still after the retries allowed",
    Reason.HTTP_503: "service unavailable, still after the retries allowed",
    Reason.HTTP_504: "gateway timeout, still after the retries allowed",
    Reason.HTTP_4XX: "another client error (the status is kept beside the code)",
    Reason.HTTP_5XX: "another server error (the status is kept beside the code)",
    Reason.HTTP_UNEXPECTED: "a status a page should not answer with (the status is kept beside the code)",
    Reason.ROBOTS: "robots.txt disallows the URL, asks for too long a delay, or could not be read",
    Reason.TIMEOUT: "connecting, reading or the whole fetch (retries included) took too long",
    Reason.TOO_LARGE: "the body (decoded) passed the size limit",
    Reason.REDIRECT_LOOP: "the redirects lead back to a URL already visited",
    Reason.TOO_MANY_REDIRECTS: "more redirects than allowed",
    Reason.PRIVATE_ADDRESS: "the URL or a redirect leads to a non-public address",
    Reason.UNSUPPORTED_TYPE: "served as a content type incidentlib does not read",
    Reason.UNSUPPORTED_SCHEME: "a URL (or redirect) that is not http or https",
    Reason.BAD_RESPONSE: "a response that could not be read",
    Reason.INVALID_URL: "not a URL that can be fetched",
    Reason.CONNECT_ERROR: "no connection could be made",
    Reason.TRANSPORT_ERROR: "the connection failed while in use",
    Reason.DEFERRED: "the host asked to wait longer than allowed (Retry-After): not requested, tried again next run",
    Reason.EXTRACT_FAILED: "the document could not be read",
    Reason.EXTRACT_UNSUPPORTED: "not HTML, Markdown, plain text or PDF (or binary served as text)",
    Reason.EXTRACT_UNREADABLE: "a document of a known kind too broken to read",
    Reason.EXTRACT_EMPTY: "a document with no text in it",
    Reason.INVALID_DRAFT: "the source's draft file is broken; a person must mend it first",
    Reason.REJECTED: "a reviewer rejected the draft; the source is skipped until it is reopened",
    Reason.MERGED: "a reviewer merged the draft into another draft or case, which has its sources: skipped for good",
    Reason.FEED_TEXT: "the draft's text is its feed's (a status page's postmortem): `discover` writes it",
    Reason.NOT_A_FEED: "a feed answered with what is not a feed of its kind (an HTML page, broken XML or JSON)",
    Reason.LLM_BUDGET: "the run's or the draft's token budget would be passed: not asked",
    Reason.LLM_TIMEOUT: "the model did not answer in time, still after the retries allowed",
    Reason.LLM_RATE_LIMITED: "the API answered 429, still after the retries allowed (a Retry-After was honoured)",
    Reason.LLM_SERVER_ERROR: "the API answered 5xx, still after the retries allowed",
    Reason.LLM_UNREACHABLE: "no connection could be made to the API",
    Reason.LLM_REFUSED: "the API refused the request (a 4xx: a wrong key, model or request)",
    Reason.LLM_CUT_OFF: "the answer was cut off by its length limit (llm_max_answer_tokens)",
    Reason.LLM_INVALID_ANSWER: "the answer was not JSON of the form asked for",
    Reason.INTERNAL_ERROR: "a bug: the run failed after every other item had its turn",
    Reason.NOT_TRIED: "no capture has been tried yet",
    Reason.NO_KEYS: "no archive keys are set: existing captures are looked up, new ones wait",
    Reason.BAD_KEYS: "the archive refused the keys",
    Reason.NO_CAPTURE_LIMIT: "the shared capture limit (INCIDENTLIB_CAPTURE_LIMIT) is missing or unreachable",
    Reason.THROTTLED: "the archive answered 429; every archive call paused",
    Reason.SUBMITTING: "a capture was being submitted when the run stopped",
    Reason.JOB_SUBMITTED: "a capture job was submitted and is being watched",
    Reason.JOB_PENDING: "the capture job had not finished when the run stopped watching it",
    Reason.JOB_EXPIRED: "the capture job is no longer known to the archive, and no capture was found",
    Reason.SUBMIT_FAILED: "the capture request got no usable answer, and no capture was found",
    Reason.CAPTURE_NOT_YET_VISIBLE: "the archive says a recent capture exists; the index does not show it yet",
    Reason.CAPTURED_TODAY_NOT_YET_VISIBLE: "captured today already; the index does not show it yet",
    Reason.SERVICE_UNREACHABLE: "the archive refused every connection or closed it unanswered, tried again: it waits",
    Reason.SERVICE_ERROR: "the archive answered 5xx or a page where its API was due, cut its answer off or was late, "
    "tried again: it waits",
    Reason.ACCOUNT_QUOTA: "the account's daily capture quota is used up: it waits for a later run",
    Reason.HOST_QUOTA: "captures of the source's host are paused or over their quota: it waits",
    Reason.CAPTURE_DELAYED: "the archive accepted the capture and will start it later; the job is watched",
    Reason.BAD_GATEWAY: "the archive: bad gateway",
    Reason.BROWSING_TIMEOUT: "the archive: its browser timed out on the page",
    Reason.CANNOT_FETCH: "the archive: could not fetch the page",
    Reason.CAPTURE_LOCATION_ERROR: "the archive: could not follow the page's location",
    Reason.CELERY: "the archive: an internal queue error",
    Reason.GATEWAY_TIMEOUT: "the archive: gateway timeout",
    Reason.INTERNAL_SERVER_ERROR: "the archive: internal server error",
    Reason.INVALID_SERVER_RESPONSE: "the archive: the page's server answered something invalid",
    Reason.JOB_FAILED: "the archive: the capture job failed",
    Reason.NO_BROWSERS_AVAILABLE: "the archive: no browser was free",
    Reason.PROTOCOL_ERROR: "the archive: a protocol error with the page's server",
    Reason.PROXY_ERROR: "the archive: a proxy error",
    Reason.READ_TIMEOUT: "the archive: reading the page timed out",
    Reason.SERVICE_UNAVAILABLE: "the archive: service unavailable",
    Reason.SOFT_TIME_LIMIT_EXCEEDED: "the archive: the capture took too long",
    Reason.TOO_MANY_REQUESTS: "the archive: too many requests",
    Reason.USER_SESSION_LIMIT: "the archive: every capture session of the account is busy",
    Reason.TOO_MANY_DAILY_CAPTURES: "the archive: the URL was captured as often as allowed today",
    Reason.TOO_MANY_CAPTURES: "the archive: the account's daily quota is used up",
    Reason.NOT_FOUND: "the archive: the page was not found",
    Reason.NO_ACCESS: "the archive: access to the page was refused",
    Reason.BLOCKED_URL: "the archive: the URL is blocked from capture",
    Reason.INVALID_URL_SYNTAX: "the archive: the URL is not valid",
    Reason.INVALID_HOST_RESOLUTION: "the archive: the host name does not resolve",
    Reason.UNAUTHORIZED: "the archive: the page asks for credentials",
    Reason.BLOCKED: "the archive: the site blocks the archive's crawler",
    Reason.FILESIZE_LIMIT: "the archive: the document is too large to capture",
    Reason.BAD_REQUEST: "the archive: the page's server refused the request as malformed (HTTP 400)",
    Reason.METHOD_NOT_ALLOWED: "the archive: the page's server does not allow the request's method (HTTP 405)",
    Reason.FTP_ACCESS_DENIED: "the archive: the FTP server refused access to the resource",
    Reason.NOT_IMPLEMENTED: "the archive: the page's server cannot handle the request's method (HTTP 501)",
    Reason.HTTP_VERSION_NOT_SUPPORTED: "the archive: the page's server refused the HTTP version (HTTP 505)",
    Reason.BANDWIDTH_LIMIT_EXCEEDED: "the archive: the page's server is over its bandwidth (HTTP 509)",
    Reason.NETWORK_AUTHENTICATION_REQUIRED: "the archive: a network proxy on its way asked it to log in (HTTP 511)",
    Reason.BLOCKED_CLIENT_IP: "the archive blocks this client's IP address (a spam list): the run stops submitting",
    Reason.NO_CAPTURES: "the archive captured nothing and says no more (not the page's answer): it waits",
    Reason.SPN_UNKNOWN: "the archive: a code incidentlib does not know (kept beside the reason)",
    Reason.ARCHIVED_ERROR_PAGE: "the archive captured an error page (4xx), which is no capture",
    Reason.ARCHIVED_SERVER_ERROR: "the archive captured the page's server error (5xx): its trouble now, tried again",
    Reason.INDEX_UNAVAILABLE: "the archive's index could not be read this time: nothing was decided",
    Reason.CAPTURE_UNREADABLE: "the newest capture could not be read to compare it with the live page",
    Reason.CAPTURE_FAILED: "a new capture was needed and could not be made",
    Reason.CAPTURE_NOT_NEWER: "the archive answered with a capture no newer than the recorded one (one an hour)",
    Reason.BLOCKED_SITE: "the archive will not show the URL's captures (the index blocks it, or playback excludes it)",
    Reason.INDEX_ROW_UNREADABLE: "an index row of the URL could not be read and may be newer than its newest capture",
    Reason.CAPTURE_NOT_INDEXED: "the recorded capture is not in the index yet and playback cannot show it: "
    "nothing was compared",
}
