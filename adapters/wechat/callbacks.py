"""Callback authentication: signatures, freshness, replays and safe-mode decryption.

WeChat signs a callback with SHA-1 over the sorted (token, timestamp, nonce) and, in safe mode
and on WeCom, the `Encrypt` field too (`msg_signature`). The plain-mode signature does not cover
the body, so a captured query string could carry any body: timestamps outside a window are
refused, and a (timestamp, nonce) seen before is accepted again only with the same body (a
WeChat retry), never with another one. Signatures are compared in constant time. A refusal is a
`Rejected` carrying the HTTP status to answer (403 forged, stale or replayed; 400 malformed).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Literal
from xml.parsers.expat import ExpatError

import xmltodict
from wechatpy.utils import WeChatSigner

from core.errors import ConfigError

Kind = Literal["official", "wecom"]
MAX_REPLAY_ENTRIES = 100_000


class Rejected(Exception):
    """A callback that must not be processed; `status` is the HTTP answer."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def signature(*parts: str) -> str:
    """WeChat's signature: SHA-1 of the sorted parts, concatenated."""
    signer = WeChatSigner()
    signer.add_data(*parts)
    return str(signer.signature)


def parse_xml(data: bytes | str) -> dict[str, Any]:
    """The `<xml>` element as a dict; `Rejected(400)` for anything else (DTDs included)."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if "<!DOCTYPE" in text.upper() or "<!ENTITY" in text.upper():
        raise Rejected(400, "XML with a document type")
    try:
        root = xmltodict.parse(text)["xml"]
    except (ExpatError, KeyError, TypeError, ValueError):
        raise Rejected(400, "malformed XML") from None
    if not isinstance(root, dict):
        raise Rejected(400, "empty XML")
    return root


class CallbackVerifier:
    """Checks and opens callbacks for one official account or WeCom app.

    Official accounts: plain mode without `encoding_aes_key`, safe mode (encrypted bodies only)
    with it. WeCom is always encrypted, so it needs the key. `max_skew_s` bounds the timestamp
    in either direction.
    """

    def __init__(self, *, kind: Kind, token: str, receiver_id: str,
                 encoding_aes_key: str | None, max_skew_s: float = 300.0,
                 clock: Callable[[], float] = time.time) -> None:
        if not token:
            raise ConfigError("the WeChat callback token is empty")
        self._kind = kind
        self._token = token
        self._receiver = receiver_id
        self._max_skew = max_skew_s
        self._clock = clock
        self._seen: OrderedDict[tuple[str, str], tuple[float, bytes]] = OrderedDict()
        self._crypto: Any = None
        if kind == "wecom" and not encoding_aes_key:
            raise ConfigError("WeCom callbacks are encrypted: the EncodingAESKey is required")
        if encoding_aes_key:
            self._crypto = _prp_crypto(kind, encoding_aes_key)

    @property
    def safe_mode(self) -> bool:
        return self._crypto is not None

    def verify_url(self, query: Mapping[str, str]) -> str:
        """The echo for WeChat's GET that checks the callback URL."""
        timestamp, nonce = self._fresh(query)
        echo = query.get("echostr", "")
        if self._kind == "official":  # plain signature in both modes, echo as it came
            self._check(query.get("signature", ""), timestamp, nonce)
            return echo
        self._check(query.get("msg_signature", ""), timestamp, nonce, echo)
        return self._decrypt(echo)

    def open(self, query: Mapping[str, str], body: bytes) -> bytes:
        """The message XML of an authentic callback; raises `Rejected` otherwise."""
        timestamp, nonce = self._fresh(query)
        if self._crypto is None:
            self._check(query.get("signature", ""), timestamp, nonce)
            self._not_replayed(timestamp, nonce, body)
            return body
        if self._kind == "official" and query.get("encrypt_type") != "aes":
            raise Rejected(403, "plain callback while safe mode is on")
        encrypt = parse_xml(body).get("Encrypt")
        if not isinstance(encrypt, str) or not encrypt:
            raise Rejected(400, "no Encrypt element")
        self._check(query.get("msg_signature", ""), timestamp, nonce, encrypt)
        self._not_replayed(timestamp, nonce, body)
        return self._decrypt(encrypt).encode("utf-8")

    # --- steps -----------------------------------------------------------------------------

    def _fresh(self, query: Mapping[str, str]) -> tuple[str, str]:
        timestamp, nonce = query.get("timestamp", ""), query.get("nonce", "")
        try:
            skew = abs(self._clock() - int(timestamp))
        except ValueError:
            raise Rejected(403, "no timestamp") from None
        if skew > self._max_skew:
            raise Rejected(403, f"stale timestamp ({skew:.0f} s off)")
        if not nonce:
            raise Rejected(403, "no nonce")
        return timestamp, nonce

    def _check(self, got: str, *parts: str) -> None:
        want = signature(self._token, *parts)
        if not hmac.compare_digest(got.encode(), want.encode()):
            raise Rejected(403, "bad signature")

    def _not_replayed(self, timestamp: str, nonce: str, body: bytes) -> None:
        """The same (timestamp, nonce) again: a retry when the body is the same, else refused."""
        now = self._clock()
        while self._seen:  # entries live as long as their timestamp could still pass
            key, (at, _) = next(iter(self._seen.items()))
            if now - at <= 2 * self._max_skew and len(self._seen) < MAX_REPLAY_ENTRIES:
                break
            del self._seen[key]
        digest = hashlib.sha256(body).digest()
        seen = self._seen.get((timestamp, nonce))
        if seen is not None and not hmac.compare_digest(seen[1], digest):
            raise Rejected(403, "replayed signature with another body")
        if seen is None:
            self._seen[(timestamp, nonce)] = (now, digest)

    def _decrypt(self, encrypt: str) -> str:
        try:
            return str(self._crypto.decrypt(encrypt, self._receiver))
        except (binascii.Error, ValueError, IndexError, TypeError, UnicodeDecodeError):
            raise Rejected(400, "undecryptable body") from None
        except Exception as exc:  # wechatpy's Invalid{App,Corp}IdException: not for us
            if type(exc).__name__.startswith("Invalid"):
                raise Rejected(403, "encrypted for another receiver") from None
            raise Rejected(400, "undecryptable body") from None


def _prp_crypto(kind: Kind, encoding_aes_key: str) -> Any:
    try:
        key = base64.b64decode(encoding_aes_key + "=", validate=True)
    except binascii.Error:
        key = b""
    if len(key) != 32:
        raise ConfigError("the EncodingAESKey must be 43 characters of base64 (a 32-byte key)")
    try:
        if kind == "wecom":
            from wechatpy.enterprise.crypto import PrpCrypto
        else:
            from wechatpy.crypto import PrpCrypto
    except Exception:  # wechatpy raises a bare Exception when no AES library is installed
        raise ConfigError("WeChat safe mode needs the `cryptography` package") from None
    return PrpCrypto(key)
