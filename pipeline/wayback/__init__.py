"""The Wayback Machine client. With pipeline.fetch, the only code that touches the network.

    client.py   Save Page Now 2 (captures and their jobs), playback, one request's rules
    cdx.py      the index: every capture of a URL or a folder, page after page
    urls.py     a capture's link, parsed: `<base>/web/<stamp><flags>/<original>`
    limits.py   the rates and the breaker every call of the process shares
    request.py  one request to the archive: what it counts as, its rate, what is sent

waybackpy's save no longer works (it uses the anonymous capture that is gone) and its
index reader cannot be bounded; of waybackpy, the index's rows are read with its public
CDXSnapshot. Every network call is made here, with httpx.
"""

from pipeline.wayback.cdx import CdxResult, CdxRow, snapshot_timestamp, snapshot_url
from pipeline.wayback.client import (
    JobState,
    SpnAnswer,
    UserStatus,
    WaybackClient,
    capture_limit_problem,
    read_answer,
    read_job,
    spn_reason,
)
from pipeline.wayback.limits import Breaker, RateLimiter
from pipeline.wayback.request import ArchiveRequest
from pipeline.wayback.urls import ArchivedUrl

__all__ = [
    "ArchiveRequest",
    "ArchivedUrl",
    "Breaker",
    "CdxResult",
    "CdxRow",
    "JobState",
    "RateLimiter",
    "SpnAnswer",
    "UserStatus",
    "WaybackClient",
    "capture_limit_problem",
    "read_answer",
    "read_job",
    "snapshot_timestamp",
    "snapshot_url",
    "spn_reason",
]
