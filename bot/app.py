"""The composition root: builds every component from settings and owns their lifecycle."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from analyst import modes as analyst_modes
from bot import symbols_store
from bot.commands import help_text
from bot.commands import web as web_commands
from bot.gateway import Gateway
from bot.migrations import MIGRATIONS
from bot.outbox import AdapterRegistry, PostgresOutbox
from bot.pipeline import switched_off
from bot.pipeline.limits import Limits
from bot.platforms import build_adapters
from bot.settings import Settings
from bot.spool import Spool
from bot.symbols_bridge import find_period, find_symbols
from bot.voice.language import store_context_source
from bot.voice.pipeline import VoicePipeline
from core.agent import AgentRunner, kernel_modes
from core.agent.modes import ModeDecl, ModeNeeds, ModeRegistry
from core.agent.runner import RunLimits
from core.llm import LLMRouter, ModelProfile
from core.llm.speech import SpeechClient
from core.ports import Adapter, Mode
from core.shutdown import settle
from core.store import Database, Store, migrate
from core.store.deliveries import Delivery
from core.tools import ToolRegistry
from debate import mode as debate_mode
from jobs.runner import JobRunner
from jobs.scheduler import Scheduler
from podcast import mode as podcast_mode

if TYPE_CHECKING:
    from bot.local_llm import LocalServer
    from bot.model_check import ModelHealth
    from tools.sandbox import SandboxPolicy

log = logging.getLogger(__name__)

# every domain's mode declarations (`core.agent.modes`): a new mode is declared in its domain's
# `MODES`; a new domain is one line here
MODE_DOMAINS: tuple[tuple[ModeDecl, ...], ...] = (
    kernel_modes.MODES, analyst_modes.MODES, debate_mode.MODES, podcast_mode.MODES)



@dataclass
class App:
    settings: Settings
    db: Database
    store: Store
    registry: ToolRegistry
    runner: AgentRunner
    gateway: Gateway
    llm: LLMRouter | None
    voice: VoicePipeline
    registry_of_adapters: AdapterRegistry
    outbox: PostgresOutbox
    jobs: JobRunner
    scheduler: Scheduler
    speech: SpeechClient | None = None
    adapters: list[Adapter] = field(default_factory=list)
    # what the start-up check found wrong with the model endpoint (None: it answers)
    model_problem: str | None = None
    # re-checks a model that is not answering, in the background, until it does
    model_health: ModelHealth | None = None
    local_model: LocalServer | None = None  # BULLPEN_LLM=local: the server this app runs

    @property
    def offline(self) -> bool:
        return self.llm is None


    @classmethod
    async def create(cls, settings: Settings) -> App:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        dsn = settings.database_url.get_secret_value() if settings.database_url else None
        console = settings.console_database_url
        db = await Database.open(dsn=dsn, data_dir=settings.data_dir,
                                 retry_budget_s=settings.db_retry_s,
                                 console_dsn=console.get_secret_value() if console else None)
        try:
            await migrate(db.pool, MIGRATIONS)
        except Exception:
            await db.aclose()
            raise
        db.supervise()  # the embedded server is started again when it goes down
        store = Store(db, files_dir=settings.files_dir)
        symbols_store.use_postgres(db.dsn)  # the directory loads from stocknames when current
        registry = build_tools(settings, db)
        await offer_generated_tools(registry, store, settings)
        from bot.local_llm import start_local_model

        try:
            local = await start_local_model(settings)  # None unless BULLPEN_LLM=local
        except Exception:
            await db.aclose()
            raise
        llm = build_llm(settings, local=local)
        profile = settings.speech_profile()
        speech = SpeechClient(profile) if profile is not None else None
        modes = build_modes(settings, registry, llm, pool=db.pool, speech=speech)
        model_problem = None
        health = None
        if llm is not None:  # checked once now; the offline modes answer until it answers
            from bot.model_check import ModelHealth, with_fallback

            health = ModelHealth(settings.default_profile() or llm.chain("agent")[0],
                                 lang=settings.operator_lang)
            model_problem = await health.check()
            health.watch()
            modes = with_fallback(modes, build_modes(settings, registry, None, pool=db.pool,
                                                     speech=speech), health)
        runner = AgentRunner(store=store, modes=modes, summarizer=llm,
                             limits=RunLimits(max_input_chars=settings.max_input_chars))
        voice = VoicePipeline.from_settings(settings)
        adapters = AdapterRegistry()
        outbox = PostgresOutbox(store.deliveries, adapters, dsn=db.dsn)

        async def paused(delivery: Delivery) -> None:
            # the bot was removed from the chat (403): its subscription stops firing
            if delivery.subscription_id is not None:
                await store.subscriptions.pause(delivery.subscription_id, "forbidden")

        outbox.on_forbidden = paused
        voice.outbox = outbox
        voice.context_source = store_context_source(db.pool)  # /lang and recent messages
        instance = secrets.token_hex(8)  # this process, on the messages it answers
        gateway = Gateway(store=store, runner=runner, preprocess=voice.preprocess,
                          outbox=outbox, report_llm=llm,
                          limits=Limits.from_settings(settings, store), instance=instance,
                          spool=Spool(settings.spool_dir, instance=instance),
                          spool_after_s=settings.inbound_spool_after_s,
                          stale_s=settings.inbound_stale_s, too_old_s=settings.inbound_too_old_s,
                          off=switched_off(settings))
        web_commands.configure(gateway, base_url=settings.web_links_base())  # /web, /share
        jobs = JobRunner(subscriptions=store.subscriptions, outbox=outbox, llm=llm,
                         grace_s=settings.jobs_grace_s, pool=db.pool, speech=speech,
                         voices=settings.speech_voices(), gate=gateway.limits.gate,
                         usage=store.usage)
        scheduler = Scheduler(dsn=db.dsn, subscriptions=store.subscriptions, runner=jobs,
                              check_s=settings.jobs_leader_check_s)
        return cls(settings=settings, db=db, store=store, registry=registry, runner=runner,
                   gateway=gateway, llm=llm, voice=voice, registry_of_adapters=adapters,
                   outbox=outbox, jobs=jobs, scheduler=scheduler, speech=speech,
                   model_problem=model_problem, model_health=health, local_model=local)

    def build_adapters(self, platforms: list[str]) -> list[Adapter]:
        """The adapters for `platforms`; what WeChat refuses for now is held by the outbox;
        the web platform reads the store through a `StoreWebDirectory`."""
        from bot.web_directory import StoreWebDirectory, admin_accounts

        directory = StoreWebDirectory(
            self.store, admins=admin_accounts(self.settings.admins),
            sql_timeout_ms=self.settings.admin_sql_timeout_ms,
            sql_row_limit=self.settings.admin_sql_row_limit,
            sql_byte_limit=self.settings.admin_sql_byte_limit,
            platforms=tuple(platforms),
            model=getattr(answering_profile(self.settings, self.llm), "model", ""),
            model_problem=self.model_problem)
        return build_adapters(self.settings, platforms, hold_in_outbox=True,
                              web_directory=directory)

    async def start_adapters(self, adapters: list[Adapter], *, jobs: bool = True) -> None:
        """Start the adapters, then the outbox's sender for their platforms and (with `jobs`)
        the scheduler, which runs in one of the processes sharing the database."""
        for adapter in adapters:
            await adapter.start(self.gateway.handler_for(adapter))
            self.adapters.append(adapter)
            self.registry_of_adapters.add(adapter)
            if adapter.name == "web" and self.settings.web_links_base() is None:
                # WEB_PORT=0: links point where the page was bound (known only now)
                web_commands.configure(self.gateway, base_url=getattr(adapter, "base_url", None))
        await self.outbox.start()
        # messages a stopped process left unanswered are answered (beat and sweep)
        self.gateway.stages.resume.start(self.registry_of_adapters.get,
                                         self.registry_of_adapters.platforms(),
                                         every_s=self.settings.inbound_sweep_s)
        if jobs:
            await self.scheduler.start()

    async def aclose(self) -> None:
        """Stop everything, each part within its grace (`core.shutdown`): one stuck part is
        logged and left behind, never the whole stop held."""
        from tools.sandbox import default_sandbox, use_sandbox

        await settle(self.scheduler.aclose(), what="the scheduler's stop")
        await settle(self.outbox.aclose(), what="the outbox's stop")
        for adapter in reversed(self.adapters):
            try:
                await settle(adapter.aclose(), what=f"the {adapter.name} adapter's close")
            except Exception:
                log.exception("adapter %s did not close cleanly", adapter.name)
        await self.gateway.aclose()  # bounded inside: its workers get the grace
        await settle(self.voice.aclose(), what="the voice pipeline's close")
        if self.speech is not None:
            await settle(self.speech.aclose(), what="the speech engine's close")
        if self.model_health is not None:
            await self.model_health.aclose()
        if self.llm is not None:
            await settle(self.llm.aclose(), what="the LLM clients' close")
        if self.local_model is not None:
            await settle(self.local_model.__aexit__(None, None, None),
                         what="the local model server's stop")
        symbols_store.stop_using()
        await settle(default_sandbox().aclose(), what="the warm sandbox's stop")
        use_sandbox(None)
        await self.db.aclose()  # bounded inside: the pool is terminated past the grace


def build_tools(settings: Settings, db: Database) -> ToolRegistry:
    import tools
    from tools.data.config import DataConfig, configure

    configure(DataConfig(
        mode=settings.data_mode, pool=db.pool, sec_user_agent=settings.sec_user_agent or "",
        tavily_api_key=settings.tavily_api_key.get_secret_value()
        if settings.tavily_api_key else "",
        timeout_s=settings.data_timeout_s, packs_dir=settings.packs_dir,
    ))
    return tools.build_registry()


# run_ta_script (sandboxed analysis code) and the strategies knowledge base (issue 22)
async def offer_generated_tools(registry: ToolRegistry, store: Store,
                                settings: Settings | None = None) -> None:
    """The sandboxed analysis tools, and the verified tools the LLM wrote for itself (always
    run in the sandbox, calculation only). Runs take a warm spare (every layer on unless a
    named setting turns one off), started on first use and ended by `App.aclose`. Where the
    host cannot build the OS jail, no code is offered or run, and start-up says so."""
    import importlib

    from tools.evolve import offer_verified
    from tools.sandbox import Sandbox, use_sandbox
    from tools.sandbox.jail import JailUnavailable

    policy = sandbox_policy(settings) if settings is not None else None
    sandbox = Sandbox(warm=True, policy=policy) if policy is not None else Sandbox(warm=True)
    use_sandbox(sandbox)
    importlib.import_module("tools.strategies")
    try:
        await sandbox.jail()
    except JailUnavailable as exc:
        log.error("sandbox: /ta, run_ta_script and generated tools are OFF: %s (set "
                  "BULLPEN_SANDBOX_WEAK_ISOLATION=1 to accept weaker isolation)", exc)
        return
    importlib.import_module("tools.ta_script")
    await offer_verified(registry, store.tool_artifacts)


def sandbox_policy(settings: Settings) -> SandboxPolicy:
    """The sandbox's layers from settings; each one off is said at start-up."""
    from tools.sandbox import SandboxPolicy

    policy = SandboxPolicy(jail_uid=settings.sandbox_uid, jail_gid=settings.sandbox_gid,
                           weak_isolation_ok=settings.sandbox_weak_isolation)
    if not settings.sandbox_ast_check:
        log.warning("sandbox: the static check is OFF (BULLPEN_SANDBOX_AST_CHECK)")
        policy = replace(policy, ast_check=False)
    if not settings.sandbox_guard:
        log.warning("sandbox: the in-process guard is OFF (BULLPEN_SANDBOX_GUARD)")
        policy = replace(policy, runtime_guard=False)
    if not settings.sandbox_isolation:
        log.warning("sandbox: the OS layer (limits, jail, seccomp) is OFF "
                    "(BULLPEN_SANDBOX_ISOLATION)")
        policy = replace(policy, os_isolation=False)
    return policy


def answering_profile(settings: Settings, llm: object) -> ModelProfile | None:
    """The profile that answers: the configured endpoint's, or the local server's
    (BULLPEN_LLM=local configures no endpoint); None with no model."""
    if llm is None:
        return None
    default = settings.default_profile()
    if default is not None or not isinstance(llm, LLMRouter):
        return default
    return llm.chain("agent")[0]


def build_llm(settings: Settings, *, local: LocalServer | None = None) -> LLMRouter | None:
    """The router over the configured profiles; with a local server (BULLPEN_LLM=local) its
    profile answers every role."""
    if local is not None:
        from bot.local_llm import profile_of

        return LLMRouter(default=profile_of(local, settings))
    default = settings.default_profile()
    if default is None:
        return None
    return LLMRouter(default=default, roles=settings.role_profiles())


def build_modes(settings: Settings, registry: ToolRegistry, llm: LLMRouter | None, *,
                pool: Any = None, speech: SpeechClient | None = None) -> dict[str, Mode]:
    """The table of modes from every domain's declarations (`MODE_DOMAINS`): with no LLM the
    offline analyst answers and the debate runs deterministic experts."""
    return ModeRegistry(decl for domain in MODE_DOMAINS for decl in domain).build(ModeNeeds(
        registry=registry, llm=llm, find_symbols=find_symbols, find_period=find_period,
        pool=pool, speech=speech,
        help_text=help_text, llm_plan=settings.llm_plan,
        # a provider that is not the router (a test's script) is not small
        small_model=isinstance(llm, LLMRouter) and llm.profile("agent").small,
        debate_token_budget=settings.debate_token_budget,
        speech_voices=settings.speech_voices()))
