"""The scrape tool's SSRF guard, over real HTTP on loopback.

Loopback cannot play the public internet, so these tests declare which networks count as
internal: 127.0.0.2 is "internal" (the metadata service, the admin port), 127.0.0.1 plays a
public web server. Names resolve through a resolver the test controls (aiohttp's documented
`AbstractResolver`), so a name can point anywhere, and change its answer (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from core.errors import DataUnavailable
from tools.data import DataConfig, configure, http
from tools.data.web_provider import PageQuery, WebPage
from tools.research import scrape_webpage

INTERNAL = (ipaddress.ip_network("127.0.0.2/32"),)  # what these tests call internal
PUBLIC_IP, INTERNAL_IP = "127.0.0.1", "127.0.0.2"


@dataclass
class Server:
    """A loopback web server; `seen` are the paths it was asked for."""

    host: str
    port: int = 0
    seen: list[str] = field(default_factory=list)

    def url(self, path: str, host: str | None = None) -> str:
        return f"http://{host or self.host}:{self.port}{path}"


async def _serve(host: str, routes: Callable[[Server], list[web.RouteDef]],
                 port: int = 0) -> tuple[Server, web.AppRunner]:
    server = Server(host)

    @web.middleware
    async def record(request: web.Request, handler: Any) -> web.StreamResponse:
        server.seen.append(request.path)
        return await handler(request)

    app = web.Application(middlewares=[record])
    app.add_routes(routes(server))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    server.port = int(runner.addresses[0][1])
    return server, runner


def _page(text: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=f"<html><head><title>{text}</title></head><body><main>{text}"
                                 "</main></body></html>", content_type="text/html")

    return handler


def _redirect(to: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        raise web.HTTPFound(to)

    return handler


@pytest.fixture
async def internal() -> AsyncIterator[Server]:
    """The service nobody outside may reach."""
    server, runner = await _serve(INTERNAL_IP, lambda s: [
        web.get("/secret", _page("INTERNAL ADMIN DATA"))])
    yield server
    await runner.cleanup()


@pytest.fixture
async def public(internal: Server) -> AsyncIterator[Server]:
    """A public site whose pages redirect where the test says."""

    def routes(s: Server) -> list[web.RouteDef]:
        async def to(request: web.Request) -> web.Response:
            raise web.HTTPFound(request.query["to"])

        async def loop(request: web.Request) -> web.Response:
            raise web.HTTPFound(f"/loop/{int(request.match_info['n']) + 1}")

        async def hop(request: web.Request) -> web.Response:  # relative, then absolute
            raise web.HTTPMovedPermanently("/to?to=" + request.query["to"])

        return [web.get("/to", to), web.get("/hop", hop), web.get("/loop/{n}", loop),
                web.get("/start", _redirect("/article")),
                web.get("/article", _page("Quarterly results"))]

    server, runner = await _serve(PUBLIC_IP, routes)
    yield server
    await runner.cleanup()


class Names(AbstractResolver):
    """A resolver the test controls: name -> the addresses it answers, in turn (the last one
    repeats); `calls` are the names it was asked."""

    def __init__(self, **answers: list[str]) -> None:
        self.answers = {name.replace("_", "."): list(ips) for name, ips in answers.items()}
        self.calls: list[str] = []

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        self.calls.append(host)
        ips = self.answers.get(host)
        if not ips:
            raise OSError(f"unknown name {host}")
        ip = ips.pop(0) if len(ips) > 1 else ips[0]
        return [{"hostname": host, "host": ip, "port": port, "family": socket.AF_INET,
                 "proto": 0, "flags": socket.AI_NUMERICHOST}]

    async def close(self) -> None:
        return None


async def fetch(url: str, resolver: AbstractResolver | None = None) -> tuple[str, str]:
    return await http.fetch_public_text(url, provider="web", blocked=INTERNAL, resolver=resolver)


async def test_a_redirect_from_a_public_page_to_an_internal_address_is_refused_naming_the_hop(
        public: Server, internal: Server) -> None:
    target = internal.url("/secret")
    with pytest.raises(DataUnavailable) as refused:  # /hop -> /to (relative) -> internal
        await fetch(public.url(f"/hop?to={target}"))
    assert "redirect #2" in str(refused.value) and target in str(refused.value)
    assert "127.0.0.2 is a private/internal address" in str(refused.value)
    assert public.seen == ["/hop", "/to"] and internal.seen == []

    names = Names(news_example=[PUBLIC_IP], metadata_internal=[INTERNAL_IP])
    by_name = f"http://metadata.internal:{internal.port}/secret"
    with pytest.raises(DataUnavailable) as refused:
        await fetch(f"http://news.example:{public.port}/to?to={by_name}", names)
    assert "redirect #1" in str(refused.value) and by_name in str(refused.value)
    assert "metadata.internal resolves to an internal address (127.0.0.2)" in str(refused.value)
    assert internal.seen == []


async def test_the_scrape_fetcher_refuses_the_same_chain(public: Server, internal: Server) -> None:
    page = WebPage(blocked=INTERNAL)
    with pytest.raises(DataUnavailable, match="redirect #1"):
        await page.fetch(PageQuery(url=public.url(f"/to?to={internal.url('/secret')}")))
    assert internal.seen == []
    raw = await page.fetch(PageQuery(url=public.url("/start")))
    assert "Quarterly results" in page.transform(PageQuery(url=public.url("/start")), raw).text


@pytest.mark.parametrize("url", [
    "http://127.0.0.2:{port}/secret",
    "http://[::ffff:127.0.0.2]:{port}/secret",  # IPv4-mapped IPv6: the same host
    "http://metadata.internal:{port}/secret",
])
async def test_a_direct_internal_url_is_refused(internal: Server, url: str) -> None:
    names = Names(metadata_internal=[INTERNAL_IP])
    with pytest.raises(DataUnavailable) as refused:
        await fetch(url.format(port=internal.port), names)
    assert "refusing the URL" in str(refused.value) and "internal" in str(refused.value)
    assert internal.seen == []


async def test_with_the_default_networks_loopback_is_refused_even_through_the_tool(
        public: Server, data_config: None) -> None:
    with pytest.raises(DataUnavailable, match=r"127\.0\.0\.1 is a private/internal address"):
        await http.fetch_public_text(public.url("/article"), provider="web")
    configure(DataConfig(mode="live"))
    with pytest.raises(DataUnavailable, match="private/internal"):
        await scrape_webpage(url=public.url("/article"))
    with pytest.raises(DataUnavailable, match="only http"):
        await scrape_webpage(url="file:///etc/passwd")
    assert public.seen == []


async def test_too_many_redirects_are_refused(public: Server) -> None:
    with pytest.raises(DataUnavailable) as refused:
        await fetch(public.url("/loop/0"))
    assert "too many redirects: more than 5" in str(refused.value)
    assert "/loop/6" in str(refused.value)  # the hop it would have taken next
    assert public.seen == [f"/loop/{n}" for n in range(6)]  # the URL and 5 redirects


async def test_a_normal_redirect_within_allowed_hosts_is_followed(public: Server) -> None:
    names = Names(news_example=[PUBLIC_IP])
    final, html = await fetch(f"http://news.example:{public.port}/start", names)
    assert final == f"http://news.example:{public.port}/article"
    assert "Quarterly results" in html and public.seen == ["/start", "/article"]
    across = public.url("/to?to=" + f"http://news.example:{public.port}/article")
    final, html = await fetch(across, names)  # another allowed host, by name
    assert final.endswith("/article") and "Quarterly results" in html


async def test_the_address_connected_to_is_the_address_checked(internal: Server) -> None:
    """DNS rebinding: a name that answers a public address first and an internal one after.
    Each connection resolves once and connects to what was checked, so the internal answer is
    refused wherever it comes, and nothing reaches the internal server."""
    public, runner = await _serve(PUBLIC_IP, lambda s: [
        web.get("/first", _redirect("/second")),
        web.get("/second", _page("public second"))], port=internal.port)
    try:
        names = Names(rebind_example=[PUBLIC_IP, INTERNAL_IP])
        with pytest.raises(DataUnavailable) as refused:
            await fetch(f"http://rebind.example:{public.port}/first", names)
        assert "redirect #1" in str(refused.value)
        assert "rebind.example resolves to an internal address (127.0.0.2)" in str(refused.value)
        assert names.calls == ["rebind.example", "rebind.example"]  # once per connection
        assert public.seen == ["/first"] and internal.seen == []

        once = Names(rebind_example=[PUBLIC_IP, INTERNAL_IP])
        _, html = await fetch(f"http://rebind.example:{public.port}/second", once)
        assert "public second" in html and once.calls == ["rebind.example"]
        assert internal.seen == []
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(("address", "internal"), [
    ("10.1.2.3", True), ("172.16.0.1", True), ("192.168.1.1", True), ("127.0.0.1", True),
    ("169.254.169.254", True), ("100.64.0.1", True), ("0.0.0.0", True), ("224.0.0.1", True),
    ("255.255.255.255", True), ("::1", True), ("::", True), ("fe80::1%2", True),
    ("fc00::1", True), ("ff02::1", True), ("::ffff:10.0.0.1", True), ("::ffff:8.8.8.8", True),
    ("64:ff9b::a00:1", True), ("2002:a00:1::", True), ("not-an-ip", True),
    ("8.8.8.8", False), ("93.184.216.34", False), ("2606:4700:4700::1111", False),
])
def test_the_default_internal_networks(address: str, internal: bool) -> None:
    assert http.internal_address(address) is internal


def test_embedded_ipv4_addresses_are_checked_against_the_declared_networks() -> None:
    assert http.internal_address("::ffff:127.0.0.2", INTERNAL)  # IPv4-mapped
    assert http.internal_address("64:ff9b::7f00:2", INTERNAL)  # NAT64
    assert http.internal_address("2002:7f00:2::", INTERNAL)  # 6to4
    assert not http.internal_address("::ffff:127.0.0.1", INTERNAL)


def test_the_socket_factory_refuses_an_internal_address_whatever_led_to_it() -> None:
    factory = http._guarded_socket_factory(INTERNAL)
    with pytest.raises(http.BlockedAddress, match="internal"):
        factory((socket.AF_INET, socket.SOCK_STREAM, 6, "", (INTERNAL_IP, 80)))
    with pytest.raises(http.BlockedAddress):
        factory((socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::ffff:127.0.0.2", 80, 0, 0)))
    factory((socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC_IP, 80))).close()
