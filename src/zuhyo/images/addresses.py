"""Which addresses a download may reach: public ones, and those of the hosts the user named.

A public server must not steer zuhyo, by a redirect, at the user's own network or a cloud metadata endpoint
(server-side request forgery). Two rules make that hold:

- :func:`is_public_address` judges an IPv6 address that carries an IPv4 address by that IPv4 address too:
  IPv4-mapped (``::ffff:10.0.0.1``), IPv4-compatible (``::10.0.0.1``), NAT64 (``64:ff9b::/96`` and the local-use
  ``64:ff9b:1::/48``), 6to4 (``2002::/16``) and Teredo (``2001::/32``, server and client);
- :class:`GuardedResolver` is the resolver of the HTTP client: the addresses it returns are the ones the connection
  is made to, so the check is on the address actually connected to (a separate look-up before the request would
  leave a DNS-rebinding window). Per download (:meth:`GuardedResolver.chain`: the URL the user named and the
  redirects it leads to) the named host is resolved as it is and its addresses are pinned as the user's; any
  other host's non-public addresses are dropped, and a host left with none is refused
  (:class:`PrivateAddressError`) before anything is sent to it. Look-ups are cached here (the client's own cache
  is off: it would share one download's verdict with another).
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressClassifier = Callable[[IPAddress], bool]
"""Says whether an address is public (redirects may lead there); :func:`is_public_address` unless injected."""

#: The download in hand (its task's context): the host its URL names and the addresses pinned for it.
_CHAIN: ContextVar[tuple[str, set[IPAddress]] | None] = ContextVar("zuhyo_fetch_chain", default=None)
DNS_TTL_S = 300.0
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, compatible, NAT64, 6to4, Teredo); [] for none."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    out: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        out.append(ip.ipv4_mapped)
    if any(ip in net for net in _NAT64) or (ip in _COMPATIBLE and int(ip) > 1):
        out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        out.append(ip.sixtofour)
    if ip.teredo is not None:
        out += list(ip.teredo)
    return out


def is_public_address(ip: IPAddress) -> bool:
    """True for globally routable unicast addresses; False for private (RFC 1918, ULA), loopback, link-local
    (169.254/16 — where cloud metadata services answer — and fe80::/10), shared (100.64/10), multicast, reserved
    and unspecified ones, and for an IPv6 address that carries such an IPv4 address (:func:`embedded_ipv4`)."""
    inner = embedded_ipv4(ip)
    if inner:
        return all(a.is_global and not a.is_multicast for a in inner)
    return ip.is_global and not ip.is_multicast


def address_kind(ip: IPAddress) -> str:
    """``loopback``, ``link-local``, ``private`` or ``non-public``, for messages."""
    for candidate in (*embedded_ipv4(ip), ip):
        for test, kind in (("is_loopback", "loopback"), ("is_link_local", "link-local"), ("is_private", "private")):
            if getattr(candidate, test):
                return kind
    return "non-public"


class PrivateAddressError(OSError):
    """A host that is not the user's resolves only to non-public addresses: not connected to."""


class GuardedResolver:
    """An aiohttp resolver (``aiohttp.abc.AbstractResolver``) that leaves out the non-public addresses of hosts the
    user did not name (see the module docstring); ``allow_private`` turns it off."""

    def __init__(self, inner: Any, is_public: AddressClassifier = is_public_address, *,
                 allow_private: bool = False) -> None:
        self.inner = inner
        self.is_public = is_public
        self.allow_private = allow_private
        self._cache: dict[tuple[str, int, int], tuple[float, list[dict[str, Any]]]] = {}

    @contextmanager
    def chain(self, host: str) -> Iterator[set[IPAddress]]:
        """While a download of a URL naming ``host`` runs (in this task): its addresses are taken as given. Yields
        the set of the user's addresses (the literal, or what ``host`` resolved to)."""
        host = host.lower().strip("[]")
        pinned: set[IPAddress] = set()
        try:
            pinned.add(ipaddress.ip_address(host.split("%", 1)[0]))
        except ValueError:
            pass
        token = _CHAIN.set((host, pinned))
        try:
            yield pinned
        finally:
            _CHAIN.reset(token)

    async def _lookup(self, host: str, port: int, family: socket.AddressFamily) -> list[dict[str, Any]]:
        key = (host.lower(), port, int(family))
        hit = self._cache.get(key)
        if hit is not None and time.monotonic() - hit[0] < DNS_TTL_S:
            return hit[1]
        infos: list[dict[str, Any]] = await self.inner.resolve(host, port, family)
        self._cache[key] = (time.monotonic(), infos)
        return infos

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[dict[str, Any]]:
        infos = await self._lookup(host, port, family)
        if self.allow_private:
            return infos
        addresses = [(info, ipaddress.ip_address(str(info["host"]).split("%", 1)[0])) for info in infos]
        chain = _CHAIN.get()
        if chain is not None and host.lower() == chain[0]:
            chain[1].update(a for _, a in addresses)  # pinned: the machine the user named
            return infos
        mine = chain[1] if chain is not None else set()
        kept = [info for info, a in addresses if self.is_public(a) or a in mine]
        if not kept:
            first = addresses[0][1] if addresses else None
            raise PrivateAddressError(f"{host} ({first}) is a {address_kind(first) if first else 'non-public'} "
                                      "address (pass --allow-private-hosts to follow redirects into private "
                                      "networks)")
        return kept

    async def close(self) -> None:
        await self.inner.close()
