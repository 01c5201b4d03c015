"""The web platform: a chat page, share links and an admin console (`WebAdapter`)."""

from adapters.web.adapter import WebAdapter

__all__ = ["WebAdapter"]
