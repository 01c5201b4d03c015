-- Issue 28: limits that hold across every `serve` process on the database, and usage that
-- belongs to the human whatever they link or unlink.

-- A person's recent hits per kind of limit ('message', 'voice', 'heavy', 'unlink'): the times
-- inside the window, oldest first, at most the limit's count of them (core.store.rate_limits).
-- One row per (person, kind), taken in one upsert that locks only that row. UNLOGGED: no WAL
-- write on the hot path of every message; after a Postgres crash the windows start empty,
-- which for rate limits is harmless (and nothing else is kept here). No foreign key (a check
-- on users for every message, for nothing): linking moves the gone person's rows itself.
CREATE UNLOGGED TABLE rate_hits (
    user_id  uuid NOT NULL,
    kind     text NOT NULL,
    hits     timestamptz[] NOT NULL,
    PRIMARY KEY (user_id, kind)
);

-- Take one hit of each kind for a person, all or none: each kind's row is locked (made when
-- missing) in the order given and pruned to its window; when any kind is full, nothing is
-- counted and the first full kind is returned with the seconds until it has room; else every
-- kind gets the hit and no row is returned. One round trip per message; concurrent takes for
-- one person (any process) queue on the row locks, so a burst never gets past the count.
CREATE FUNCTION rate_take(p_user uuid, p_kinds text[], p_counts int[], p_per_s float8[])
RETURNS TABLE (kind text, wait_s float8) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    kept timestamptz[];
    n int;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_kinds), 0) LOOP
        INSERT INTO rate_hits AS r (user_id, kind, hits) VALUES (p_user, p_kinds[i], '{}')
        ON CONFLICT ON CONSTRAINT rate_hits_pkey DO UPDATE SET hits = ARRAY(
            SELECT h FROM unnest(r.hits) h
            WHERE h > now() - p_per_s[i] * interval '1 second' ORDER BY h)
        RETURNING r.hits INTO kept;
        n := cardinality(kept);
        IF n >= p_counts[i] THEN
            kind := p_kinds[i];
            wait_s := greatest(0, extract(epoch FROM kept[n - p_counts[i] + 1]
                                          + p_per_s[i] * interval '1 second' - now()));
            RETURN NEXT;
            RETURN;
        END IF;
    END LOOP;
    UPDATE rate_hits SET hits = hits || now()
    WHERE user_id = p_user AND rate_hits.kind = ANY (p_kinds);
END
$$;

-- Spend carried by /unlink to the account that left (a copy of the person's day and month,
-- so that neither side starts below what the human spent): the person it was copied from.
-- Linking the two again drops the copies of rows that come back with the merge.
ALTER TABLE usage ADD COLUMN carried_from uuid;

-- Identical subscriptions are found (and refused) by their chat and schedule.
CREATE INDEX subscriptions_schedule ON subscriptions (platform, chat_id, at_time)
    WHERE status <> 'removed';
