"""asyncpg repositories, one module per aggregate; no ORM."""

from __future__ import annotations

from pathlib import Path

from core.store.accounts import AccountsRepo
from core.store.budgets import Budget, BudgetsRepo, Spend
from core.store.conversations import (
    INTERRUPTED_NOTE,
    STOPPED_NOTE,
    Conversation,
    ConversationsRepo,
    StoredMessage,
    TurnStart,
)
from core.store.database import Database
from core.store.deliveries import DeliveriesRepo, Delivery
from core.store.files import FilesRepo
from core.store.inbound import Inbound, InboundRepo
from core.store.kept_replies import KeptRepliesRepo
from core.store.migrate import migrate
from core.store.rate_limits import RateLimitsRepo
from core.store.strategies import StrategiesRepo
from core.store.subscriptions import Subscription, SubscriptionsRepo
from core.store.tool_artifacts import ToolArtifactsRepo
from core.store.usage import UsageRepo, UsageTotals
from core.store.web import WebRepo


class Store:
    """The repositories over one pool."""

    def __init__(self, db: Database, *, files_dir: Path) -> None:
        self.db = db
        self.pool = db.pool
        self.accounts = AccountsRepo(db.pool)
        self.conversations = ConversationsRepo(db.pool)
        self.inbound = InboundRepo(db.pool)
        self.files = FilesRepo(db.pool, files_dir=files_dir)
        self.usage = UsageRepo(db.pool)
        self.kept_replies = KeptRepliesRepo(db.pool)
        self.deliveries = DeliveriesRepo(db.pool)
        self.subscriptions = SubscriptionsRepo(db.pool)
        self.strategies = StrategiesRepo(db.pool)
        self.tool_artifacts = ToolArtifactsRepo(db.pool)
        self.budgets = BudgetsRepo(db.pool)
        self.rate_limits = RateLimitsRepo(db.pool)
        self.web = WebRepo(db.pool, console_dsn=db.console_dsn)


__all__ = [
    "INTERRUPTED_NOTE",
    "STOPPED_NOTE",
    "AccountsRepo",
    "Budget",
    "BudgetsRepo",
    "Conversation",
    "ConversationsRepo",
    "Database",
    "DeliveriesRepo",
    "Delivery",
    "FilesRepo",
    "Inbound",
    "InboundRepo",
    "KeptRepliesRepo",
    "Spend",
    "Store",
    "StoredMessage",
    "StrategiesRepo",
    "Subscription",
    "SubscriptionsRepo",
    "ToolArtifactsRepo",
    "TurnStart",
    "UsageRepo",
    "UsageTotals",
    "WebRepo",
    "migrate",
]
