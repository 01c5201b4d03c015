-- Market data: normalised provider answers cached with a per-dataset TTL, and raw provider
-- responses recorded for record/replay sessions. Errors are never written to either table.

-- How long a dataset's cached answers stay fresh; code defaults apply to datasets not listed.
CREATE TABLE market_data_ttl (
    dataset      text PRIMARY KEY,
    ttl_seconds  integer NOT NULL CHECK (ttl_seconds >= 0)
);
INSERT INTO market_data_ttl (dataset, ttl_seconds) VALUES
    ('bars', 900),
    ('bars.intraday', 60),
    ('cn.financials', 86400),
    ('cn.shareholders', 86400),
    ('cn.dividends', 86400),
    ('cn.dragon_tiger', 3600),
    ('cn.capital_flow', 600),
    ('cn.northbound', 600),
    ('cn.flow_ranking', 300),
    ('cn.screener', 300),
    ('cn.hotspots', 300),
    ('cn.fund_nav', 3600),
    ('cn.fund_holdings', 86400),
    ('news.list', 600),
    ('us.financials', 86400),
    ('sec.tickers', 86400),
    ('sec.filings', 3600),
    ('sec.document', 604800),
    ('sec.13f', 86400),
    ('web.search', 3600),
    ('web.page', 3600);

-- One normalised answer (a tool-ready pydantic model as JSON) per dataset and query.
CREATE TABLE market_data_cache (
    dataset     text NOT NULL,
    key         text NOT NULL,  -- sha256 of the canonical query JSON
    query       jsonb NOT NULL,
    provider    text NOT NULL,
    value       text NOT NULL,
    fetched_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (dataset, key)
);
CREATE INDEX market_data_cache_expires ON market_data_cache (expires_at);

-- Raw provider responses of a recording session, replayed verbatim (text, not jsonb, so the
-- bytes come back exactly as they were stored).
CREATE TABLE provider_recordings (
    provider     text NOT NULL,
    dataset      text NOT NULL,
    key          text NOT NULL,
    query        jsonb NOT NULL,
    response     text NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, dataset, key)
);
