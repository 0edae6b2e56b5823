"""What Save Page Now says, word for word: the messages, the status_ext codes and their texts.

The Wayback stand-in (pipeline/standins/wayback.py) answers with these; a client reading the
service's answers is tested against them. Where each wording comes from (the SPN2 document, a
recorded answer, or only the document's description where no wording is recorded) is listed in
the manual, docs/archive.md, section "Where the stand-in's words come from"; a comment here
names its row there. How a client treats each is in the same page's table of every code.
"""

from __future__ import annotations

__all__ = [
    "BROWSER_CRASHED",
    "CODE_STATUS",
    "DELAY_WB_S",
    "HOST_PAUSED",
    "HOST_PAUSED_JOB",
    "JOB_MESSAGES",
    "MAX_REDIRECTS",
    "SESSION_LIMIT",
    "TOO_MANY_BODY",
    "code_for_status",
    "delay_text",
    "html_error",
    "seconds",
    "span",
]

# The manual's row "429 page".
TOO_MANY_BODY = (
    b"<html><body><h1>429 Too Many Requests</h1>\n"
    b"You have sent too many requests in a given amount of time.\n</body></html>"
)
SESSION_LIMIT = (
    "You have already reached the limit of active Save Page Now sessions. "
    "Please wait for a minute and then try again."
)  # row "session limit"
HOST_PAUSED = (
    "Crawling this host is paused because they notified us that they are overloaded right now."  # row "host paused"
)
# The same pause ending a job, as real job ends word it (row "host paused at the job's end").
HOST_PAUSED_JOB = (
    "crawling this host is paused because they notified us that they are overloaded right now. (http status=429)"
)
# A job error with no status_ext (row "a job error without a code").
BROWSER_CRASHED = "Save Page Now browser crashed on URL {url}."
MAX_REDIRECTS = 3  # row "redirects": three are followed
DELAY_WB_S = 12 * 3600.0  # row "delay_wb_availability": about 12 hours

# The status_ext codes with the texts the service words them in (rows "job errors" and "no-captures").
# A page's HTTP error always ends " (HTTP status=NNN)." as spn.sh expects. `{url}` is the page,
# `{status}` its status.
JOB_MESSAGES: dict[str, str] = {
    "bad-gateway": "Bad Gateway for {url} (HTTP status={status}).",
    "bad-request": "The server could not understand the request for {url} due to invalid syntax. "
    "(HTTP status={status}).",
    "bandwidth-limit-exceeded": "The target server has exceeded the bandwidth specified by the server administrator. "
    "(HTTP status={status}).",
    "blocked": "The target site is blocking us (HTTP status={status}).",
    "blocked-client-ip": "Anonymous clients which are listed in Spamhaus XBL or SBL lists are blocked.",
    "blocked-url": "This URL is in the Save Page Now service block list and cannot be captured.",
    "browsing-timeout": "SPN2 back-end headless browser timeout.",
    "capture-location-error": "SPN2 back-end cannot find the created capture location. (system error).",
    "cannot-fetch": "Cannot fetch the target URL due to system overload.",
    "celery": "Cannot start capture task.",
    "filesize-limit": "Cannot capture web resources over 2GB.",
    "ftp-access-denied": "Tried to capture an FTP resource but access was denied.",
    "gateway-timeout": "The target server didn't respond in time. (HTTP status={status}).",
    "http-version-not-supported": "The target server does not support the HTTP protocol version used in the request "
    "for {url} (HTTP status={status}).",
    "internal-server-error": "SPN internal server error.",
    "invalid-url-syntax": "Target URL syntax is not valid.",
    "invalid-server-response": "The target server response was invalid. "
    "(e.g. invalid headers, invalid content encoding, etc).",
    "invalid-host-resolution": "Couldn't resolve host for {url}.",
    "job-failed": "Capture failed due to system error.",
    "max-daily-bandwidth": "You have reached your daily bandwidth limit.",
    "max-daily-bandwidth-from-ip": "Your IP address has reached its daily bandwidth limit.",
    "max-daily-bandwidth-host": "This host has reached its daily bandwidth limit.",
    "method-not-allowed": "The request method is known by the server but has been disabled and cannot be used "
    "(HTTP status={status}).",
    "network-authentication-required": "The client needs to authenticate to gain network access to {url} "
    "(HTTP status={status}).",
    "no-access": "The capture failed because Save Page Now does not have access rights for {url} "
    "(HTTP status={status}).",
    "no-browsers-available": "SPN2 back-end headless browser cannot run.",
    "no-captures": "Save Page Now could not capture this URL because it was unreachable. "
    "If the site is online, it may be blocking access from our service.",
    "not-found": "The target server cannot find the requested resource {url} (HTTP status={status}).",
    "not-implemented": "The request method is not supported by the server and cannot be handled "
    "(HTTP status={status}).",
    "protocol-error": "HTTP connection broken. (A possible cause of this error is IncompleteRead).",
    "proxy-error": "SPN2 back-end proxy error.",
    "read-timeout": "HTTP connection read timeout.",
    "service-unavailable": "Service Unavailable for {url} (HTTP status={status}).",
    "soft-time-limit-exceeded": "Capture duration exceeded 45s time limit and was terminated.",
    "too-many-daily-captures": "This URL has been captured 10 times today. We cannot make any more captures.",
    "too-many-redirects": "Too many redirects. SPN2 tries to follow 3 redirects automatically.",
    "too-many-requests": "The target host has received too many requests from SPN and it is blocking it. "
    "(HTTP status={status}).",
    "unauthorized": "The server requires authentication for {url} (HTTP status={status}).",
    "user-session-limit": "User has reached the limit of concurrent active capture sessions.",
}
# The status an HTTP-bound code stands for, when a switch forces the code without a page.
CODE_STATUS = {
    "bad-gateway": 502,
    "bad-request": 400,
    "bandwidth-limit-exceeded": 509,
    "blocked": 999,
    "gateway-timeout": 504,
    "http-version-not-supported": 505,
    "method-not-allowed": 405,
    "network-authentication-required": 511,
    "no-access": 403,
    "not-found": 404,
    "not-implemented": 501,
    "service-unavailable": 503,
    "too-many-requests": 429,
    "unauthorized": 401,
}
# A page's status to the code its job ends with, without capture_all (row "job errors").
# Unattested choices: 410 is not-found (the brief's reading), another 4xx is bad-request and
# another 5xx (500 included) bad-gateway, the nearest documented codes.
_CODE_FOR_STATUS = {
    400: "bad-request",
    401: "unauthorized",
    403: "no-access",
    404: "not-found",
    405: "method-not-allowed",
    410: "not-found",
    429: "too-many-requests",
    501: "not-implemented",
    502: "bad-gateway",
    503: "service-unavailable",
    504: "gateway-timeout",
    505: "http-version-not-supported",
    509: "bandwidth-limit-exceeded",
    511: "network-authentication-required",
    999: "blocked",
}


def code_for_status(status: int) -> str:
    return _CODE_FOR_STATUS.get(status) or ("bad-request" if 400 <= status < 500 else "bad-gateway")


def html_error(status: int) -> bytes:
    """The front end's own error page (row "HTML 5xx": nginx's layout)."""
    reason = {502: "Bad Gateway", 503: "Service Temporarily Unavailable", 504: "Gateway Time-out"}.get(status, "Error")
    return (
        f"<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
        f"<center><h1>{status} {reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    ).encode()


def span(seconds: float) -> str:
    """A duration the way SPN words it: "2 minutes", "1 hour, 12 minutes", "177 hours" (no days)."""
    minutes = int(seconds // 60)
    hours, minutes = divmod(minutes, 60)
    unit_m = f"{minutes} minute{'' if minutes == 1 else 's'}"
    if not hours:
        return unit_m
    unit_h = f"{hours} hour{'' if hours == 1 else 's'}"
    return f"{unit_h}, {unit_m}" if minutes else unit_h


def delay_text(seconds: float) -> str:
    """ "~3 hours, 40 minutes" as in "The capture will start in ~3 hours, 40 minutes …" (row "delayed start").
    Under an hour the hours are left out, under a minute the seconds are said (unattested; spn.sh
    parses hours, minutes and seconds alike)."""
    if seconds < 60:
        return f"~{int(seconds)} seconds"
    minutes = int(seconds // 60)
    hours, minutes = divmod(minutes, 60)
    unit_m = f"{minutes} minute{'' if minutes == 1 else 's'}"
    return f"~{hours} hour{'' if hours == 1 else 's'}, {unit_m}" if hours else f"~{unit_m}"


def seconds(value: str) -> float | None:
    """`if_not_archived_within`: seconds, or a number with d, h, m or s; `a,b` gives `a` to the page
    itself (row "if_not_archived_within"). None for anything else (ignored, as an absent option)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    text = value.split(",", 1)[0].strip().lower()
    try:
        if text[-1:] in units:
            return float(text[:-1]) * units[text[-1]]
        return float(text)
    except ValueError:
        return None
