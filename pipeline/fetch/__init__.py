"""Fetching sources politely and safely (httpx). With wayback.py, the only code that touches the network.

async with Fetcher(settings) as fetcher:
    result = await fetcher.fetch(url, etag=..., last_modified=...)

fetcher.py    the Fetcher: politeness, robots.txt, retries, redirects, conditional requests
guard.py      the address guard every connection passes (private addresses refused)
standins.py   hosts answered by local stand-ins (the offline demo's public URLs)
body.py       response bodies decoded a bounded piece at a time
deadline.py   one deadline for all a fetch does
"""

from pipeline.fetch.fetcher import ACCEPTED_TYPES, Fetcher, FetchResult, fetch_url_for, host_key
from pipeline.fetch.guard import is_allowed_address, is_public_address

__all__ = [
    "ACCEPTED_TYPES",
    "FetchResult",
    "Fetcher",
    "fetch_url_for",
    "host_key",
    "is_allowed_address",
    "is_public_address",
]
