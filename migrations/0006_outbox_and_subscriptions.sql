-- The outbox: everything that must arrive without an inbound message to answer (scheduled
-- reports, an answer the renderer could not deliver live). A delivery is stored before it is
-- sent, once per key; a sender claims it with a lease (a crashed sender's claim runs out and
-- another takes it), records each piece as it goes out, and retries until the deadline.

CREATE TABLE outbox_blobs (          -- file bytes, stored once however many deliveries share them
    sha256      text PRIMARY KEY,
    data        bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deliveries (
    id               bigserial PRIMARY KEY,
    key              text NOT NULL UNIQUE,
    platform         text NOT NULL,
    chat_id          text NOT NULL,
    chat             jsonb NOT NULL,             -- the ChatRef
    items            jsonb NOT NULL,             -- texts, and files by blob
    source           text NOT NULL DEFAULT '',   -- 'job:<subscription>', 'answer', ...
    subscription_id  bigint,
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'delivered', 'held', 'failed', 'cancelled')),
    pieces_sent      int NOT NULL DEFAULT 0,     -- resume point after a crash mid-delivery
    message_ids      jsonb NOT NULL DEFAULT '[]',
    attempts         int NOT NULL DEFAULT 0,
    last_error       text NOT NULL DEFAULT '',
    deadline         timestamptz NOT NULL,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    lease_until      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    delivered_at     timestamptz
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_held ON deliveries (platform, chat_id) WHERE status = 'held';
CREATE INDEX deliveries_subscription ON deliveries (subscription_id, created_at);

-- A person's watchlist follows them across linked accounts (keyed by user).
CREATE TABLE watchlist (
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    symbol      text NOT NULL,
    position    int NOT NULL DEFAULT 0,
    added_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, symbol)
);

-- A subscription belongs to a chat (groups included) and to the person who made it.
CREATE TABLE subscriptions (
    id          bigserial PRIMARY KEY,
    owner_id    uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    platform    text NOT NULL,
    chat_id     text NOT NULL,
    chat        jsonb NOT NULL,
    kind        text NOT NULL DEFAULT 'report' CHECK (kind IN ('report', 'podcast')),
    symbols     text[] NOT NULL DEFAULT '{}',   -- empty: the owner's watchlist at fire time
    at_time     text NOT NULL,                  -- HH:MM in tz
    recurrence  text NOT NULL,
    tz          text NOT NULL,
    calendar    text,
    lang        text NOT NULL DEFAULT 'en',
    options     jsonb NOT NULL DEFAULT '{}',
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'removed')),
    paused_reason text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscriptions_chat ON subscriptions (platform, chat_id) WHERE status <> 'removed';
CREATE INDEX subscriptions_owner ON subscriptions (owner_id) WHERE status <> 'removed';

-- Each fire is recorded once per (subscription, fire time), whichever process fires it.
CREATE TABLE job_fires (
    subscription_id  bigint NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    fire_at          timestamptz NOT NULL,
    status           text NOT NULL DEFAULT 'fired' CHECK (status IN ('fired', 'missed', 'done', 'failed')),
    delivery_key     text,
    detail           text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subscription_id, fire_at)
);

-- A user's time zone (/tz); NULL: the default of their language.
ALTER TABLE users ADD COLUMN tz text;
