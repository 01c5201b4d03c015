"""The one-time sign-in link to the web page: its own light module, so that `bullpen web login`
makes one without importing the command table (and through it the scheduler's calendars)."""

from __future__ import annotations

from uuid import UUID

from bot.logs import register_ephemeral
from core.store import Store
from core.store.web import LOGIN_TTL


async def login_link(store: Store, base_url: str, user_id: UUID) -> str:
    """A one-time sign-in link for the person (valid 10 minutes, once)."""
    token = await store.web.issue_login(user_id)
    register_ephemeral(token, LOGIN_TTL.total_seconds())  # SDKs log request bodies
    return f"{base_url}/login/{token}"
