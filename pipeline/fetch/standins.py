"""Hosts answered by local stand-ins (`stand_in_hosts`): the offline demo's public URLs, served locally.

The demo serves its bundled postmortems as if from their public URLs (github.com, the Rust blog),
so that its records name the real sources and their ids carry no local port. Each request to a
stand-in host is sent to the stand-in's base URL instead, path and query kept, as a transport
below httpx's client: the Fetcher above it (politeness by host, robots.txt, redirects, the URL it
reports) sees the public URL alone, and the address guard sees the stand-in's address.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

__all__ = ["StandInTransport", "SyncStandInTransport", "to_stand_in"]


def to_stand_in(request: httpx.Request, hosts: Mapping[str, str]) -> httpx.Request:
    """`request` sent to its host's stand-in (a new request; the caller's is left as it is), or itself."""
    base = hosts.get(request.url.host.lower())
    if base is None:
        return request
    target = httpx.URL(base)
    url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
    return httpx.Request(
        request.method, url, headers=request.headers, stream=request.stream, extensions=request.extensions
    )


class StandInTransport(httpx.AsyncBaseTransport):
    """An async transport that sends the requests to stand-in hosts to their stand-ins."""

    def __init__(self, inner: httpx.AsyncBaseTransport, hosts: Mapping[str, str]) -> None:
        self.inner, self.hosts = inner, dict(hosts)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(to_stand_in(request, self.hosts))

    async def aclose(self) -> None:
        await self.inner.aclose()


class SyncStandInTransport(httpx.BaseTransport):
    """The same for a synchronous client (the Wayback stand-in's, which fetches what it captures)."""

    def __init__(self, inner: httpx.BaseTransport, hosts: Mapping[str, str]) -> None:
        self.inner, self.hosts = inner, dict(hosts)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(to_stand_in(request, self.hosts))

    def close(self) -> None:
        self.inner.close()
