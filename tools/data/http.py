"""HTTP for providers (aiohttp): every failure becomes `DataUnavailable` naming the provider.

`fetch_public_text` reads pages the model names (the scrape tool) behind the SSRF guard below.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from core.errors import DataUnavailable
from tools.data.config import get_config

BROWSER_UA = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/126.0 Safari/537.36")


async def _request(method: str, url: str, *, provider: str, as_json: bool,
                   headers: dict[str, str] | None = None, params: dict[str, Any] | None = None,
                   json_body: Any = None, max_bytes: int = 20_000_000) -> Any:
    cfg = get_config()
    timeout = aiohttp.ClientTimeout(total=cfg.timeout_s)
    hdrs = {"User-Agent": BROWSER_UA, **(headers or {})}
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session, session.request(
                method, url, headers=hdrs, params=params, json=json_body) as resp:
            _raise_for_status(resp.status, url, provider)
            body = await resp.content.read(max_bytes + 1)
            if len(body) > max_bytes:
                body = body[:max_bytes]
            text = body.decode(resp.charset or "utf-8", errors="replace")
    except TimeoutError as exc:
        raise DataUnavailable(f"timed out after {cfg.timeout_s:g}s ({_host(url)})",
                              provider=provider) from exc
    except aiohttp.ClientError as exc:
        raise DataUnavailable(f"{type(exc).__name__} reaching {_host(url)}",
                              provider=provider) from exc
    if not as_json:
        return text
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataUnavailable(f"non-JSON response from {_host(url)}", provider=provider) from exc


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


async def get_json(url: str, *, provider: str, headers: dict[str, str] | None = None,
                   params: dict[str, Any] | None = None) -> Any:
    return await _request("GET", url, provider=provider, as_json=True, headers=headers,
                          params=params)


async def post_json(url: str, body: Any, *, provider: str,
                    headers: dict[str, str] | None = None) -> Any:
    return await _request("POST", url, provider=provider, as_json=True, headers=headers,
                          json_body=body)


async def get_text(url: str, *, provider: str, headers: dict[str, str] | None = None,
                   params: dict[str, Any] | None = None, max_bytes: int = 20_000_000) -> str:
    return str(await _request("GET", url, provider=provider, as_json=False, headers=headers,
                              params=params, max_bytes=max_bytes))


# --- fetching pages the model names (SSRF guard) -------------------------------------------------
#
# A URL the model chose may point anywhere, so reading it must never reach the machine's own
# network. The guard is enforced where the connection is made, not by a look-up beforehand
# (which DNS rebinding defeats: the name resolves to a public address when checked and to an
# internal one when connected):
#
# - every hop of a redirect chain is a new request to a URL checked afresh (http or https, no
#   internal IP literal), at most `max_redirects` of them;
# - a host name is resolved once, by the connector's resolver, which refuses the name when any
#   address it resolves to is internal; the connection is made to the addresses it returned;
# - the socket factory refuses an internal address whatever led to it (IP literals skip the
#   resolver), so nothing internal is ever connected to;
# - no proxy from the environment (a proxy would connect on our behalf, unchecked) and no
#   connection reuse across hops (each hop resolves, is checked and connects on its own).
#
# `DataConfig.allow_private_urls` (off by default) lifts the address check; tests declare which
# networks count as internal through `blocked` (loopback cannot play the public internet).

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Every network IANA's special-purpose registries mark as not globally reachable, plus
# multicast and the IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4,
# Teredo): their embedded address is checked too, but they are refused outright by default.
INTERNAL_NETWORKS: tuple[Network, ...] = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",  # private
    "100.64.0.0/10",  # carrier-grade NAT
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link-local (cloud metadata: 169.254.169.254)
    "172.16.0.0/12",  # private
    "192.0.0.0/24",  # IETF protocol assignments
    "192.0.2.0/24",  # documentation
    "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
    "192.168.0.0/16",  # private
    "198.18.0.0/15",  # benchmarking
    "198.51.100.0/24",  # documentation
    "203.0.113.0/24",  # documentation
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and the limited broadcast address
    "::/96",  # unspecified, loopback, IPv4-compatible (deprecated)
    "::ffff:0:0/96",  # IPv4-mapped
    "64:ff9b::/96",  # NAT64
    "64:ff9b:1::/48",  # local-use NAT64
    "100::/64",  # discard-only
    "2001::/23",  # IETF protocol assignments (Teredo 2001::/32 among them)
    "2001:db8::/32",  # documentation
    "2002::/16",  # 6to4
    "3fff::/20",  # documentation
    "5f00::/16",  # segment routing SIDs
    "fc00::/7",  # unique local
    "fe80::/10",  # link-local
    "fec0::/10",  # site-local (deprecated)
    "ff00::/8",  # multicast
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def internal_address(address: str, blocked: Sequence[Network] = INTERNAL_NETWORKS) -> bool:
    """Whether `address` (an IP address as text) is in `blocked`, or is an IPv6 address whose
    embedded IPv4 address is (IPv4-mapped or -compatible, NAT64, 6to4, Teredo). Anything that
    is not an IP address counts as internal."""
    try:
        ip: Address = ipaddress.ip_address(address)
    except ValueError:
        return True
    candidates: list[Address] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        low32 = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
        if ip.ipv4_mapped is not None:
            candidates.append(ip.ipv4_mapped)
        if int(ip) >> 32 == 0 or ip in _NAT64:  # IPv4-compatible, NAT64
            candidates.append(low32)
        if ip.sixtofour is not None:
            candidates.append(ip.sixtofour)
        if ip.teredo is not None:
            candidates.extend(ip.teredo)
    return any(c.version == net.version and c in net for c in candidates for net in blocked)


class BlockedAddress(OSError):
    """A connection to an internal address was refused (raised inside the connector)."""


class _GuardedResolver(AbstractResolver):
    """Resolves with `base` (the default resolver when None) and refuses a name any of whose
    addresses is internal. The connector connects to exactly the addresses returned here."""

    def __init__(self, blocked: Sequence[Network], base: AbstractResolver | None) -> None:
        self._blocked = tuple(blocked)
        self._own = base is None
        self._base = base if base is not None else DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        found = await self._base.resolve(host, port, family)
        for info in found:
            if internal_address(info["host"], self._blocked):
                raise BlockedAddress(f"{host} resolves to an internal address ({info['host']})")
        return found

    async def close(self) -> None:
        if self._own:
            await self._base.close()


def _guarded_socket_factory(
        blocked: Sequence[Network]) -> Callable[[tuple[Any, ...]], socket.socket]:
    """The last check, on the very address a socket is about to connect to."""
    networks = tuple(blocked)

    def factory(addr_info: tuple[Any, ...]) -> socket.socket:
        family, type_, proto, _, sockaddr = addr_info
        if internal_address(str(sockaddr[0]), networks):
            raise BlockedAddress(f"{sockaddr[0]} is an internal address")
        return socket.socket(family=family, type=type_, proto=proto)

    return factory


def _networks(blocked: Sequence[Network] | None) -> tuple[Network, ...]:
    if blocked is not None:
        return tuple(blocked)
    return () if get_config().allow_private_urls else INTERNAL_NETWORKS


def _hop_name(hop: int) -> str:
    return "the URL" if hop == 0 else f"redirect #{hop}"


def _check_url(url: str, *, hop: int, blocked: Sequence[Network], provider: str) -> None:
    """What can be checked without resolving: the scheme, a host, and an IP-literal host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DataUnavailable(f"refusing {_hop_name(hop)} {url!r}: only http(s) URLs can be "
                              "fetched", provider=provider)
    host = parts.hostname
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return  # a name: checked when the connector resolves it
    if internal_address(host, blocked):
        raise DataUnavailable(f"refusing {_hop_name(hop)} {url}: {host} is a private/internal "
                              "address", provider=provider)


def _blocked_reason(exc: aiohttp.ClientConnectorError) -> str | None:
    err = exc.os_error
    if isinstance(err, BlockedAddress):
        return str(err)
    if "is an internal address" in str(err) or "resolves to an internal address" in str(err):
        return str(err)  # several addresses failed; happy eyeballs merged the errors
    return None


async def check_public_url(url: str, *, provider: str,
                           blocked: Sequence[Network] | None = None,
                           resolver: AbstractResolver | None = None) -> None:
    """A pre-flight answer: refuse URLs that are not http(s) or whose host is (or resolves to)
    a private, loopback, link-local or otherwise internal address, unless
    `DataConfig.allow_private_urls` is set. Not a guard by itself (the name may resolve
    differently later): fetching goes through `fetch_public_text`, which checks the address
    it connects to."""
    networks = _networks(blocked)
    _check_url(url, hop=0, blocked=networks, provider=provider)
    host = urlsplit(url).hostname or ""
    if not networks:
        return
    guarded = _GuardedResolver(networks, resolver)
    try:
        await guarded.resolve(host, 0, socket.AF_UNSPEC)
    except BlockedAddress as exc:
        raise DataUnavailable(f"refusing {url}: {exc} (private/internal)",
                              provider=provider) from None
    except OSError as exc:
        raise DataUnavailable(f"cannot resolve {host}", provider=provider) from exc
    finally:
        await guarded.close()


async def fetch_public_text(url: str, *, provider: str, max_bytes: int = 5_000_000,
                            max_redirects: int = MAX_REDIRECTS,
                            blocked: Sequence[Network] | None = None,
                            resolver: AbstractResolver | None = None) -> tuple[str, str]:
    """GET a page on the public internet: (the final URL, its text).

    Redirects are followed here, at most `max_redirects`, each hop checked as the first URL.
    `blocked` are the internal networks (default: `INTERNAL_NETWORKS`, or none when
    `DataConfig.allow_private_urls` is set); `resolver` resolves names (default: aiohttp's).
    Every refusal and failure is a `DataUnavailable` naming the hop."""
    cfg = get_config()
    networks = _networks(blocked)
    connector = aiohttp.TCPConnector(
        resolver=_GuardedResolver(networks, resolver), use_dns_cache=False, force_close=True,
        socket_factory=_guarded_socket_factory(networks))
    current = url
    try:
        async with aiohttp.ClientSession(connector=connector, trust_env=False,
                                         timeout=aiohttp.ClientTimeout(total=cfg.timeout_s),
                                         headers={"User-Agent": BROWSER_UA}) as session:
            for hop in range(max_redirects + 1):
                _check_url(current, hop=hop, blocked=networks, provider=provider)
                try:
                    async with session.get(current, allow_redirects=False) as resp:
                        if resp.status in REDIRECT_STATUSES:
                            location = resp.headers.get("Location")
                            if not location:
                                raise DataUnavailable(
                                    f"HTTP {resp.status} without a Location from "
                                    f"{_host(current)}", provider=provider)
                            current = urljoin(str(resp.url), location)
                            continue
                        _raise_for_status(resp.status, current, provider)
                        body = await resp.content.read(max_bytes + 1)
                        text = body[:max_bytes].decode(resp.charset or "utf-8", errors="replace")
                        return current, text
                except aiohttp.ClientConnectorError as exc:
                    reason = _blocked_reason(exc)
                    if reason is None:
                        raise
                    raise DataUnavailable(f"refusing {_hop_name(hop)} {current}: {reason}",
                                          provider=provider) from None
    except TimeoutError as exc:
        raise DataUnavailable(f"timed out after {cfg.timeout_s:g}s ({_host(current)})",
                              provider=provider) from exc
    except aiohttp.ClientError as exc:
        raise DataUnavailable(f"{type(exc).__name__} reaching {_host(current)}",
                              provider=provider) from exc
    raise DataUnavailable(f"too many redirects: more than {max_redirects} starting at {url} "
                          f"(the next would go to {current})", provider=provider)


def _raise_for_status(status: int, url: str, provider: str) -> None:
    if status == 403:
        raise DataUnavailable(f"HTTP 403 forbidden from {_host(url)}", provider=provider)
    if status == 404:
        raise DataUnavailable(f"HTTP 404 not found: {url}", provider=provider)
    if status == 429:
        raise DataUnavailable(f"HTTP 429 rate limited by {_host(url)}", provider=provider)
    if status >= 400:
        raise DataUnavailable(f"HTTP {status} from {_host(url)}", provider=provider)
