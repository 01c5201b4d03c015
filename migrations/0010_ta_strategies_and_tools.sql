-- Technical-analysis strategies (a knowledge base the agent looks up and extends) and the tools
-- the LLM writes for itself (artifacts, execution traces, error reports, patches).

CREATE TABLE ta_strategies (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL,
    aliases     text[] NOT NULL DEFAULT '{}',
    description text NOT NULL DEFAULT '',
    indicators  text[] NOT NULL DEFAULT '{}',
    parameters  jsonb NOT NULL DEFAULT '{}'::jsonb,
    rules       text NOT NULL DEFAULT '',
    source_url  text NOT NULL DEFAULT '',
    origin      text NOT NULL DEFAULT 'builtin',  -- builtin, agent, user
    -- lower-cased name and aliases, kept by the repository: substring search for Chinese
    -- (which has no spaces for full-text search to split on) and exact alias hits
    search_text text NOT NULL DEFAULT '',
    search      tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector('simple', search_text), 'A') ||
                    setweight(to_tsvector('simple', coalesce(description, '')), 'C')) STORED,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX ta_strategies_name ON ta_strategies (lower(name));
CREATE INDEX ta_strategies_search ON ta_strategies USING gin (search);
CREATE INDEX ta_strategies_aliases ON ta_strategies USING gin (aliases);

CREATE TABLE tool_artifacts (
    id            bigserial PRIMARY KEY,
    name          text NOT NULL,
    version       text NOT NULL,                 -- semantic version, 0.1.0 upwards
    content_hash  text NOT NULL UNIQUE,          -- sha256 of the code: the same code once
    code          text NOT NULL,
    task          text NOT NULL DEFAULT '',
    description   text NOT NULL DEFAULT '',
    parameters    jsonb NOT NULL DEFAULT '{}'::jsonb,  -- JSON schema from the signature
    status        text NOT NULL DEFAULT 'provisional'
                  CHECK (status IN ('provisional', 'verified', 'deprecated', 'failed')),
    permissions   text[] NOT NULL DEFAULT '{calc_only}',
    attempts      int NOT NULL DEFAULT 1,
    parent_id     bigint REFERENCES tool_artifacts (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (name, version)
);
CREATE INDEX tool_artifacts_status ON tool_artifacts (status, name);

CREATE TABLE tool_traces (
    id          bigserial PRIMARY KEY,
    tool_id     bigint REFERENCES tool_artifacts (id) ON DELETE CASCADE,
    kind        text NOT NULL,                   -- check, test, call
    ok          boolean NOT NULL,
    status      text NOT NULL DEFAULT '',        -- the sandbox's status
    input       jsonb NOT NULL DEFAULT '{}'::jsonb,
    output      jsonb,
    error       text NOT NULL DEFAULT '',
    elapsed_ms  double precision NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_traces_tool ON tool_traces (tool_id, created_at);

CREATE TABLE tool_error_reports (
    id          bigserial PRIMARY KEY,
    tool_id     bigint NOT NULL REFERENCES tool_artifacts (id) ON DELETE CASCADE,
    trace_id    bigint REFERENCES tool_traces (id) ON DELETE SET NULL,
    category    text NOT NULL,                   -- syntax, security, import, type, key, ...
    message     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tool_patches (
    id            bigserial PRIMARY KEY,
    from_tool_id  bigint NOT NULL REFERENCES tool_artifacts (id) ON DELETE CASCADE,
    to_tool_id    bigint NOT NULL REFERENCES tool_artifacts (id) ON DELETE CASCADE,
    report_id     bigint REFERENCES tool_error_reports (id) ON DELETE SET NULL,
    attempt       int NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
