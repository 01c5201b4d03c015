"""A new message between dedupe and routing, in order: held deliveries (what the outbox held for
the chat goes first), what is not for the bot (edits, group chatter not addressed to it:
recorded `ignored`), the person (created on first sight of the account), admission (refused:
told, recorded `answered`), the notice of subscriptions paused since the person last wrote,
then the added stages (`context.Stage`, in the order given). What is left goes to routing."""

from __future__ import annotations

from uuid import UUID

from bot.budget_gateway import account_of
from bot.pipeline.context import Arrival, Stage
from bot.pipeline.held import HeldDeliveries
from bot.pipeline.outcome import Outcome
from bot.pipeline.routing import Routing
from bot.pipeline.spend import Admission
from core.ports import Adapter
from core.store import Store
from core.store.inbound import Inbound
from core.types import IncomingMessage
from core.words import detect_lang, t


class Arrivals:
    def __init__(self, *, store: Store, held: HeldDeliveries, admission: Admission,
                 outcome: Outcome, added: tuple[Stage, ...], routing: Routing) -> None:
        self._store = store
        self._held = held
        self._admission = admission
        self._outcome = outcome
        self.added = added
        self._routing = routing

    async def __call__(self, adapter: Adapter, msg: IncomingMessage, got: Inbound,
                       epoch: int) -> None:
        await self._held.chat_wrote(msg.chat, held=bool(got.held))  # what was held first
        if msg.is_edit or (msg.chat.is_group and not msg.addressed):
            await self._outcome.mark(msg, "ignored")
            return  # edits are not re-answered; group chatter is not for us
        conversation = got.conversation
        if got.user_id is not None:
            user_id, chosen = got.user_id, got.lang
        elif conversation is None and self._admission.everyone:
            # a new account in a chat without a conversation, nobody refused at the door: the
            # person and the chat's conversation in one round trip
            first = await self._store.accounts.first_sight(
                msg.chat, msg.sender.platform_uid, msg.sender.display_name)
            user_id, chosen, conversation = first.user_id, first.lang, first.conversation
        else:  # first sight of this account: create its user
            user_id, chosen = await self._store.accounts.user_and_lang(
                msg.platform, msg.sender.platform_uid, msg.sender.display_name)
        lang = chosen or detect_lang(msg.text)
        if not await self._admission.admitted(msg, user_id):
            await self._outcome.say(adapter, msg, t("chat.access_denied", lang,
                                                    who=account_of(msg)))
            await self._outcome.mark(msg, "answered")
            return
        if got.paused_subscriptions:
            await self._tell_paused(adapter, msg, lang, got.paused_subscriptions)
        if self.added and await self._added(adapter, msg, user_id, lang):
            await self._outcome.mark(msg, "answered")
            return
        await self._routing.route(adapter, msg, user_id, lang, conversation, epoch,
                                 inbound_id=got.id)

    async def _added(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                     lang: str) -> bool:
        """The added stages in order; True when one answered the message itself."""
        async def tell(text: str) -> None:
            await self._outcome.say(adapter, msg, text)

        arrival = Arrival(adapter=adapter, message=msg, user_id=user_id, lang=lang, say=tell)
        for stage in self.added:
            if await stage(arrival):
                return True
        return False

    async def _tell_paused(self, adapter: Adapter, msg: IncomingMessage, lang: str,
                           ids: tuple[int, ...]) -> None:
        """A subscription whose chat refused the bot (removed, blocked) was paused: its owner
        hears of it here, once, wherever they write next."""
        subs = self._store.subscriptions
        for sub_id in ids:
            sub = await subs.get(sub_id)
            if sub is None:
                continue
            what = ", ".join(sub.symbols) or t("subs.watchlist", lang)
            where = f"{sub.chat.platform} {sub.chat.chat_id}"
            await self._outcome.say(adapter, msg, t("subs.paused_owner", lang, id=sub.id,
                                                    what=what, where=where))
            await subs.acknowledge_pause(sub.id)
