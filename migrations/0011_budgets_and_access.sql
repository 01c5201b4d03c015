-- Who may spend what: a person's own budgets (NULL: the settings' default) and access
-- ('allow' admits them in allowlist mode, 'block' refuses them in any mode).
CREATE TABLE user_limits (
    user_id         uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    access          text CHECK (access IN ('allow', 'block')),
    daily_tokens    bigint,
    monthly_tokens  bigint,
    daily_usd       numeric(14, 6),
    monthly_usd     numeric(14, 6),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
