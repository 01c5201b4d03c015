-- The symbols directory: every A-share, US ticker and curated HK name the bot resolves.
-- Written by `bullpen symbols refresh` (tools.symbols.store.save_entries), read at startup
-- into the in-memory index (tools.symbols.store.load_entries). Derived forms (pinyin,
-- initials, traditional characters, alias pinyin) are stored so loading needs no converters.

CREATE TABLE stocknames (
    market      text NOT NULL CHECK (market IN ('cn', 'us', 'hk')),
    code        text NOT NULL,                    -- 600519, AAPL, BRK-B, 0700
    exchange    text,                             -- SH, SZ, BJ, Nasdaq, NYSE, OTC, CBOE, HKEX
    name        text NOT NULL,                    -- 贵州茅台, "Apple Inc."
    name_en     text,                             -- English name of a Chinese listing
    pinyin      text,                             -- "gui zhou mao tai"
    initials    text,                             -- "gzmt"
    name_tw     text,                             -- traditional characters: 貴州茅臺
    aliases     text[] NOT NULL DEFAULT '{}',     -- former names, curated short names, their pinyin
    sector      text,                             -- CSRC industry (cn)
    list_date   date,
    indices     text[] NOT NULL DEFAULT '{}',     -- csi300, csi500, sp500, nasdaq100, dow30
    cik         text,                             -- SEC CIK, 10 digits (us)
    rank        integer,                          -- source order; SEC lists by size
    is_primary  boolean NOT NULL DEFAULT true,    -- false for secondary classes and preferreds
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (market, code)
);

CREATE INDEX stocknames_name ON stocknames (name);
CREATE INDEX stocknames_cik ON stocknames (cik) WHERE cik IS NOT NULL;
CREATE INDEX stocknames_aliases ON stocknames USING gin (aliases);
