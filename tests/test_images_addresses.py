"""Which addresses a download may reach: IPv6 forms of private IPv4 addresses, and the address actually connected
to (the client's resolver, so a name that resolves to a public address for a check and a private one for the
connection gains nothing)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

import pytest

from zuhyo.images.addresses import GuardedResolver, PrivateAddressError, embedded_ipv4, is_public_address


@pytest.mark.parametrize("address", [
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254 (cloud metadata)
    "64:ff9b:1::c0a8:101",  # local-use NAT64 of 192.168.1.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "::ffff:10.0.0.1", "::10.0.0.1", "::127.0.0.1",  # mapped, compatible
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo whose client is 10.0.0.1 (obfuscated)
])
def test_ipv6_forms_of_private_ipv4_addresses_are_not_public(address: str):
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700:4700::1111", "8.8.8.8"])
def test_public_addresses_stay_public(address: str):
    assert is_public_address(ipaddress.ip_address(address))
    assert all(a.is_global for a in embedded_ipv4(ipaddress.ip_address(address)))


class _Rebinding:
    """A resolver that answers a public address first and a private one after (DNS rebinding)."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.calls = 0

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[dict[str, Any]]:
        self.calls += 1
        found = self.answers[host]
        addr = found[min(self.calls - 1, len(found) - 1)]
        return [{"hostname": host, "host": addr, "port": port, "family": family, "proto": 0, "flags": 0}]

    async def close(self) -> None:
        return None


def test_the_connected_address_is_the_checked_one_and_named_hosts_are_pinned():
    async def go() -> None:
        guarded = GuardedResolver(_Rebinding({"rebind.test": ["93.184.216.34", "10.0.0.1"],
                                              "mine.test": ["10.9.9.9"], "alias.test": ["10.9.9.9"]}))
        assert (await guarded.resolve("rebind.test", 80))[0]["host"] == "93.184.216.34"
        assert (await guarded.resolve("rebind.test", 80))[0]["host"] == "93.184.216.34"  # cached: one answer
        guarded._cache.clear()  # the answer's time is up: the name now resolves to a private address
        with pytest.raises(PrivateAddressError, match=r"rebind.test \(10.0.0.1\) is a private address"):
            await guarded.resolve("rebind.test", 80)  # the second answer, the one connected to, is refused
        with guarded.chain("mine.test") as mine:  # a host the user named: taken as given, its address pinned
            assert (await guarded.resolve("mine.test", 80))[0]["host"] == "10.9.9.9"
            assert (await guarded.resolve("alias.test", 80))[0]["host"] == "10.9.9.9"  # the machine named
            assert mine == {ipaddress.ip_address("10.9.9.9")}
        with pytest.raises(PrivateAddressError):  # another download: not the machine its user's URL names
            await guarded.resolve("alias.test", 80)
        off = GuardedResolver(_Rebinding({"x.test": ["10.0.0.1"]}), allow_private=True)
        assert (await off.resolve("x.test", 80))[0]["host"] == "10.0.0.1"

    asyncio.run(go())


def test_a_redirect_to_a_name_of_a_private_address_is_refused_where_it_connects():
    """A redirect to ``localhost`` from a server on 127.0.0.2: the client's resolver refuses 127.0.0.1 / ::1 (not
    the machine the user named) before anything is sent; allowed with ``allow_private_hosts``."""
    from aiohttp import web

    from zuhyo.images.fetch import PageFetchError, PoliteFetcher

    async def go() -> None:
        hits: list[str] = []

        async def handle(request: web.Request) -> web.StreamResponse:
            hits.append(request.host.split(":")[0])
            if request.path == "/start":
                raise web.HTTPFound(f"http://localhost:{request.url.port}/inside")
            return web.Response(text="inside")

        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", handle)
        runner = web.AppRunner(app)
        await runner.setup()
        try:
            await web.TCPSite(runner, "127.0.0.2", 0).start()
        except OSError as e:
            await runner.cleanup()
            pytest.skip(f"cannot listen on 127.0.0.2: {e}")
        url = f"http://127.0.0.2:{runner.addresses[0][1]}/start"
        try:
            async with PoliteFetcher(delay_s=0, retries=0) as fetcher:
                with pytest.raises(PageFetchError, match=r"redirect to http://localhost:\d+/inside refused: "
                                                         r"localhost \(.*\) is a loopback address"):
                    await fetcher.get(url)
            assert hits == ["127.0.0.2"]
        finally:
            await runner.cleanup()

    asyncio.run(go())
