"""One exception tree for everything that crosses a package boundary.

    BullpenError
    ├── ConfigError            settings missing or contradictory (exit code 2 at the CLI)
    │   └── SynthesisNeedsModel     [tools.evolve.synthesizer] tool synthesis with no model
    ├── StoreError             Postgres unreachable, migration failed
    │   ├── StoreUnavailable   the database cannot be reached now: nothing stored, not acked
    │   └── ConsoleOff         the admin console cannot log in as its own weak role (says why)
    ├── InputError             the user's input is unusable (empty, too long, bad file)
    │   ├── InvalidArguments   a tool's arguments failed validation
    │   ├── TooLarge           a file over a size limit, refused before it was read whole
    │   ├── QueryRefused       the admin console's SQL failed (Postgres's own message)
    │   ├── ScheduleError           [jobs.schedule] a /subscribe or /tz argument
    │   ├── BudgetTooSmall          [debate.experts] not even the leanest debate fits
    │   ├── DebateFailed            [debate.engine] every expert or the judge failed
    │   ├── PodcastError            [podcast.models] no podcast from this input
    │   └── AudioError              [bot.voice.decode] a voice note that cannot be used
    │       ├── AudioEmpty
    │       ├── AudioTooLong
    │       ├── AudioTooLarge
    │       ├── AudioUndecodable
    │       ├── AudioSilent
    │       ├── SpeechUnclear
    │       ├── SpeechNotEnglish
    │       ├── LanguageUnsupported
    │       ├── NoteTooSlow
    │       ├── TranscriptionUnavailable
    │       ├── FetchFailed
    │       └── NoVoiceNote
    ├── ToolError              a tool ran and failed
    │   ├── UnknownTool        no tool by that name
    │   ├── DataUnavailable    a provider could not supply data (names the provider)
    │   ├── UnknownSymbol      a name or code that the directory does not know (with suggestions)
    │   └── ScriptFailed            [tools.sandbox.host] sandboxed code refused or failed
    ├── LLMError               a provider failed
    │   ├── LLMTimeout
    │   │   └── CallTimedOut        [core.llm.openai_provider] a call past its limit
    │   ├── LLMRateLimited     carries retry_after
    │   ├── LLMBadResponse     malformed or empty response
    │   ├── ContextOverflow         [core.llm.fit] a request that cannot fit the window
    │   └── AllProfilesFailed       [core.llm.base] every profile of a role's chain failed
    ├── PlatformError          an adapter's platform refused an operation
    │   ├── RateLimited        carries retry_after (seconds)
    │   ├── MessageNotModified edit with identical content: harmless
    │   ├── FormattingRejected the platform rejected the markup (retry as plain text)
    │   ├── Forbidden          the user blocked the bot or the chat is gone
    │   ├── Held               refused for now (WeChat's closed window): when the chat next writes
    │   ├── PlatformUnavailable  not reached or failed on its side (5xx, network): try again
    │   │   └── Unreachable         [adapters.wechat.clients] not reached: a kept reply stays
    │   └── WindowClosed            [adapters.wechat.clients] keep the reply
    ├── SignatureError         a webhook's signature or secret did not verify
    ├── RunCancelled           /stop ended a run
    └── BudgetExhausted             [debate.budget] a call past the debate's token budget

A class drawn with `[module]` lives in that module, and so do the untagged ones drawn under it;
the others live here. Private subclasses (`_Name`) stay inside their module and are not drawn.
`tests/core/test_errors_tree.py` checks the drawing against the code.

`ict` is pure (no imports of ours), so its `ICTInputError` stops at the tools boundary,
where it becomes `InvalidArguments` or `DataUnavailable`.
"""

from __future__ import annotations


class BullpenError(Exception):
    """Root of every error Bullpen raises across a package boundary."""


class ConfigError(BullpenError):
    pass


class StoreError(BullpenError):
    pass


class StoreUnavailable(StoreError):
    """The database cannot be reached now (down, restarting) and retries ran out: nothing was
    stored, so the caller must not acknowledge what it was given (the platform redelivers)."""


class InputError(BullpenError):
    pass


class InvalidArguments(InputError):
    pass


class TooLarge(InputError):
    """A file over a size limit (an attachment to download), refused without reading it whole:
    `size` is its size in bytes when declared (None when not), `limit` the limit, `read` the
    bytes read before refusing."""

    def __init__(self, message: str, *, size: int | None, limit: int, read: int = 0) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit
        self.read = read


class ToolError(BullpenError):
    pass


class UnknownTool(ToolError):
    pass


class DataUnavailable(ToolError):
    """A provider could not supply the data; `provider` names which one, `causes` the raw
    errors behind a message said in the user's words (for an operator, never a chat)."""

    def __init__(self, message: str, *, provider: str = "",
                 causes: list[str] | None = None) -> None:
        super().__init__(f"{provider}: {message}" if provider else message)
        self.provider = provider
        self.causes = list(causes or [])


class UnknownSymbol(ToolError):
    """The directory does not know a name; `suggestions` are the closest it has."""

    def __init__(self, query: str, suggestions: list[str] | None = None) -> None:
        self.query = query
        self.suggestions = suggestions or []
        hint = f" Did you mean: {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"Unknown symbol {query!r}.{hint}")


class LLMError(BullpenError):
    pass


class LLMTimeout(LLMError):
    pass


class LLMRateLimited(LLMError):
    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class LLMBadResponse(LLMError):
    pass


class PlatformError(BullpenError):
    pass


class RateLimited(PlatformError):
    def __init__(self, message: str = "rate limited", *, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class MessageNotModified(PlatformError):
    pass


class FormattingRejected(PlatformError):
    pass


class Forbidden(PlatformError):
    pass


class ConsoleOff(StoreError):
    """The admin console is off: it cannot log in as its role (`bullpen_console`), or the
    login it was given is not that weak role. There is no fallback to a stronger one: the
    message says why, for the page to show."""


class QueryRefused(InputError):
    """The admin console's SQL failed or was refused (a write in the READ ONLY transaction, a
    timeout, a syntax error); the message is Postgres's own."""


class SignatureError(BullpenError):
    pass


class RunCancelled(BullpenError):
    pass


class PlatformUnavailable(PlatformError):
    """The platform was not reached or failed on its side (HTTP 5xx, a network error, a
    timeout): nothing says the operation was refused, so the same one may work in a moment.
    A placeholder whose edit failed this way is still there: it is edited again later, never
    replaced by a new message (which would leave it saying it is working, for good)."""


class Held(PlatformError):
    """The platform refuses for now (WeChat: the user's 48-hour window is closed); the outbox
    holds the delivery until the chat next writes."""
