-- Security in depth (issue #27).
--
-- 1. /link codes are stored as their SHA-256, like web sign-in links: what the database holds
--    cannot be typed as a code. Codes live ten minutes; the plain ones are simply dropped.
DELETE FROM link_codes;
ALTER TABLE link_codes DROP COLUMN code;  -- and the primary key on it
ALTER TABLE link_codes ADD COLUMN code_hash bytea NOT NULL PRIMARY KEY;

-- 2. The admin console reads named Bullpen tables, never a secret: no sign-in links
--    (web_logins), no sessions or CSRF tokens (web_sessions), no link codes, no share token
--    hashes. A table made by a later migration is invisible to the console until that migration
--    grants it. (The role itself is made by 0012 or core.store.roles, where it can be.)
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bullpen_console') THEN
        REVOKE ALL ON ALL TABLES IN SCHEMA public FROM bullpen_console;
        REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM bullpen_console;
        GRANT SELECT ON
            users, platform_accounts, link_failures, conversations, messages, inbound_events,
            files, usage, stocknames, market_data_cache, market_data_ttl, provider_recordings,
            debate_reports, kept_replies, deliveries, outbox_blobs, subscriptions, job_fires,
            watchlist, ta_strategies, tool_artifacts, tool_error_reports, tool_patches,
            tool_traces, user_limits, schema_migrations
        TO bullpen_console;
        GRANT SELECT (conversation_id, created_by, created_at, revoked_at) ON shares
        TO bullpen_console;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'the console''s grants not made (the migrating user owns not every table): %',
        SQLERRM;
END
$$;
