-- Bullpen's first schema: people, their platform accounts, conversations and what was said,
-- the inbound dedupe log, files and LLM usage.

CREATE TABLE users (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    display_name    text NOT NULL DEFAULT '',
    lang            text,  -- NULL: follow the language of each message
    preferences     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_active_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE platform_accounts (
    id            bigserial PRIMARY KEY,
    user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    platform      text NOT NULL,
    platform_uid  text NOT NULL,
    display_name  text NOT NULL DEFAULT '',
    linked_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (platform, platform_uid)
);
CREATE INDEX platform_accounts_user ON platform_accounts (user_id);

CREATE TABLE link_codes (
    code             text PRIMARY KEY,
    user_id          uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    used_at          timestamptz
);

-- Wrong link codes typed by a user: five within ten minutes lock further tries.
CREATE TABLE link_failures (
    id         bigserial PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    failed_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE conversations (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id        uuid REFERENCES users(id) ON DELETE SET NULL,
    platform       text NOT NULL,
    chat_id        text NOT NULL,
    thread_id      text NOT NULL DEFAULT '',
    mode           text NOT NULL DEFAULT 'normal' CHECK (mode IN ('normal', 'fast', 'debate')),
    title          text NOT NULL DEFAULT '',
    summary        text NOT NULL DEFAULT '',
    summary_up_to  bigint NOT NULL DEFAULT 0,
    token_used     bigint NOT NULL DEFAULT 0,
    token_budget   bigint,
    is_active      boolean NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
-- One active conversation per chat (and thread); /new retires it and starts another.
CREATE UNIQUE INDEX conversations_one_active
    ON conversations (platform, chat_id, thread_id) WHERE is_active;

CREATE TABLE messages (
    id                   bigserial PRIMARY KEY,
    conversation_id      uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role                 text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content              text NOT NULL DEFAULT '',
    tool_calls           jsonb,
    tool_call_id         text,
    platform_message_id  text,
    reply_message_ids    text[] NOT NULL DEFAULT '{}',
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation ON messages (conversation_id, id);

CREATE TABLE inbound_events (
    id           bigserial PRIMARY KEY,
    platform     text NOT NULL,
    chat_id      text NOT NULL,
    message_id   text NOT NULL,
    sender_uid   text NOT NULL DEFAULT '',
    payload      jsonb NOT NULL DEFAULT '{}'::jsonb,
    status       text NOT NULL DEFAULT 'received',
    received_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (platform, chat_id, message_id)
);

CREATE TABLE files (
    id               bigserial PRIMARY KEY,
    user_id          uuid REFERENCES users(id) ON DELETE SET NULL,
    conversation_id  uuid REFERENCES conversations(id) ON DELETE SET NULL,
    filename         text NOT NULL,
    kind             text NOT NULL,
    mime_type        text NOT NULL DEFAULT 'application/octet-stream',
    size_bytes       bigint NOT NULL DEFAULT 0,
    path             text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE usage (
    id                 bigserial PRIMARY KEY,
    user_id            uuid REFERENCES users(id) ON DELETE SET NULL,
    conversation_id    uuid REFERENCES conversations(id) ON DELETE SET NULL,
    provider           text NOT NULL DEFAULT '',
    model              text NOT NULL DEFAULT '',
    role               text NOT NULL DEFAULT '',
    prompt_tokens      int NOT NULL DEFAULT 0,
    completion_tokens  int NOT NULL DEFAULT 0,
    cost_usd           numeric(14, 6) NOT NULL DEFAULT 0,
    latency_ms         int NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_conversation ON usage (conversation_id);
CREATE INDEX usage_user_month ON usage (user_id, created_at);
