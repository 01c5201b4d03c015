-- The web platform: one-time sign-in links, browser sessions and public share links.
-- Only a SHA-256 of each secret token is stored: the database never holds a working link
-- or cookie.

-- A sign-in link from /web (or `bullpen web login`): valid for 10 minutes, once.
CREATE TABLE web_logins (
    token_hash  bytea PRIMARY KEY,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX web_logins_user ON web_logins (user_id);

-- A signed-in browser: the cookie's hash, its CSRF token, until expiry or /web logout.
CREATE TABLE web_sessions (
    token_hash  bytea PRIMARY KEY,
    csrf        text NOT NULL,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX web_sessions_user ON web_sessions (user_id) WHERE revoked_at IS NULL;

-- A conversation published read-only at /s/<token> until /unshare.
CREATE TABLE shares (
    token_hash       bytea PRIMARY KEY,
    conversation_id  uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    created_by       uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    revoked_at       timestamptz
);
CREATE INDEX shares_conversation ON shares (conversation_id) WHERE revoked_at IS NULL;

-- The admin console's SQL runs as this role, which the console logs in as (no superuser
-- powers: COPY TO PROGRAM, pg_read_file, SET ROLE). Made only where the migrating user may make
-- roles. (This migration first granted it pg_read_all_data, which also reads pg_authid and
-- every secret: core.store.roles revokes that where it was given; 0015 grants SELECT on named
-- tables instead.)
DO $$
BEGIN
    IF (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bullpen_console') THEN
            CREATE ROLE bullpen_console LOGIN;
        ELSE
            ALTER ROLE bullpen_console LOGIN;
        END IF;
    END IF;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'bullpen_console role not made: %', SQLERRM;
END
$$;
