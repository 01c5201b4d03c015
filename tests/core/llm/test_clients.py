"""HTTP clients to model endpoints share one TLS context per library (core/llm/clients.py):
made once, still verifying certificates."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import openai
import pytest
from aiohttp import web

from core.llm.clients import http_client, openai_client


def _pool_context(client: httpx.AsyncClient | object) -> ssl.SSLContext:
    return client._transport._pool._ssl_context  # type: ignore[attr-defined]


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A key and a self-signed certificate for 127.0.0.1 (`cryptography`: wechatpy's extra)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    key_path, cert_path = tmp_path / "key.pem", tmp_path / "cert.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


@pytest.fixture
async def untrusted_https(self_signed: tuple[Path, Path]) -> AsyncIterator[str]:
    """A loopback HTTPS server with a self-signed certificate nobody trusts."""
    key, cert = self_signed
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    async def models(_: web.Request) -> web.Response:
        return web.json_response({"data": []})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"https://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


async def test_clients_share_one_context_per_library() -> None:
    made = [openai_client(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=3)
            for _ in range(3)]
    assert len({id(_pool_context(c._client)) for c in made}) == 1
    assert made[0].timeout == 3 and made[0].max_retries == 0  # as asked, not the client's default
    plain = [http_client(timeout=3) for _ in range(2)]
    assert _pool_context(plain[0]) is _pool_context(plain[1])
    for c in made:
        await c.close()
    for h in plain:
        await h.aclose()


async def test_the_shared_context_still_refuses_an_untrusted_certificate(
        untrusted_https: str) -> None:
    client = openai_client(base_url=untrusted_https, api_key="k", timeout=5)
    try:
        with pytest.raises(openai.APIConnectionError) as refused:
            await client.models.list()
        assert "CERTIFICATE_VERIFY_FAILED" in repr(refused.value.__cause__)
    finally:
        await client.close()
    async with http_client(timeout=5) as http:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await http.get(untrusted_https + "/models")
