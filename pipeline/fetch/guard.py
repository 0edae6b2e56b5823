"""The address guard: no connection of the crawler reaches a non-public address unless allowed.

Every connection, redirects included, goes through a network backend that resolves the host,
refuses the addresses `allow_private_hosts` does not allow, and connects to the very address
it checked, so a second DNS answer cannot differ. URLs are given their addresses in one
written form first, so every spelling of an address (`0177.0.0.1`, `2130706433`,
`[::ffff:127.0.0.1]`) meets the guard as the address it is.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx
from httpcore._backends.auto import AutoBackend

from pipeline.errors import PrivateAddressRefused
from pipeline.fetch.standins import StandInTransport
from pipeline.ids import address_host
from pipeline.settings import Settings

__all__ = ["Networks", "guarded_transport", "is_allowed_address", "is_public_address", "with_written_address"]

Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def with_written_address(url: str) -> str:
    """`url` with an IP address host in its one written form (`0177.0.0.1` → `127.0.0.1`).

    httpx refuses some spellings resolvers accept and passes others to the resolver; written
    out, every spelling reaches the address guard as the address it is.
    """
    parts = urlsplit(url)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        return url  # a bad port: httpx says so
    address = address_host(host) if host else None
    if address is None or address == host:
        return url
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = (f"{userinfo}@" if userinfo else "") + address + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


# NAT64 prefixes, whose addresses lead to the IPv4 address they carry: the well-known one
# (RFC 6052) and the one for local use (RFC 8215). A /96 under either puts it in the last 32
# bits; the shorter layouts RFC 6052 allows under 64:ff9b:1::/48 leave zeros there, which
# read as a non-public address and are refused.
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
# Link-local addresses, where clouds serve instance metadata (credentials), and the metadata
# addresses outside link-local (Alibaba's, AWS's IPv6, Google Cloud's IPv6):
# `allow_private_hosts=true` does not open them; only a listed network inside them does.
_METADATA_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in ("169.254.0.0/16", "fe80::/10", "100.100.100.200/32", "fd00:ec2::254/128", "fd20:ce::254/128")
)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64), which is where it leads."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if any(ip in prefix for prefix in _NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            return is_public_address(str(embedded))
        if ip in _IPV4_COMPATIBLE or ip.is_site_local:
            return False
    # is_global is False for private, loopback, link-local (cloud metadata), shared
    # (100.64/10), reserved, documentation and unspecified ranges alike.
    return ip.is_global and not ip.is_multicast


def _within(
    net: ipaddress.IPv4Network | ipaddress.IPv6Network, other: ipaddress.IPv4Network | ipaddress.IPv6Network
) -> bool:
    return net.version == other.version and net.subnet_of(other)  # type: ignore[arg-type]


def is_allowed_address(address: str, allow: bool | Networks) -> bool:
    """Whether the guard lets a connection to `address` through under `allow_private_hosts`.

    Public addresses always; with `True` every other one but link-local and cloud metadata;
    with networks, the addresses in them, metadata only by a network that lies inside it
    (`169.254.169.254/32` names it, `0.0.0.0/0` does not).
    """
    if is_public_address(address):
        return True
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        ip = _embedded_ipv4(ip) or ip  # where it leads
    metadata = [net for net in _METADATA_NETWORKS if ip in net]
    if allow is True:
        return not metadata
    naming = [net for net in allow or () if ip in net]
    if metadata:
        return any(_within(net, meta) for net in naming for meta in metadata)
    return bool(naming)


class _AddressGuard(httpcore.AsyncNetworkBackend):
    """A network backend that checks the address before every TCP connection."""

    def __init__(self, allow: bool | Networks) -> None:
        self._inner = AutoBackend()
        self._allow = allow

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror}") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        for address in addresses:
            if not is_allowed_address(address, self._allow):
                raise PrivateAddressRefused(f"{host}:{port}", host, address)
        error: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectError as exc:
                error = exc
        raise error or httpcore.ConnectError(f"no address for {host}")

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("unix sockets are not used by the crawler")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def guarded_transport(settings: Settings, limits: httpx.Limits) -> httpx.AsyncBaseTransport:
    """The crawler's transport: every connection through the address guard; requests to the
    `stand_in_hosts` sent to their stand-ins (pipeline.fetch.standins)."""
    transport = _guarded(settings, limits)
    return StandInTransport(transport, settings.stand_in_hosts) if settings.stand_in_hosts else transport


def _guarded(settings: Settings, limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    # trust_env=False: a proxy from the environment would make the proxy, not the
    # guard, choose the address connected to.
    transport = httpx.AsyncHTTPTransport(limits=limits, trust_env=False)
    # httpx has no public hook for the network backend; swap the pool it built for
    # one that uses the guard (tests/test_fetch.py proves the guard is in the path).
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=transport._pool._ssl_context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_AddressGuard(settings.allow_private_hosts),
    )
    return transport
