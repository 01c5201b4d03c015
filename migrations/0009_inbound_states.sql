-- Crash-safe processing: an inbound message keeps what is needed to answer it again (the whole
-- message, its user and language, the bot's placeholder for it) and which serve process is
-- answering it, with a heartbeat. Messages left received or running by a process that stopped
-- beating are answered again by another (or, past a staleness limit, the user is told).
ALTER TABLE inbound_events
    ADD COLUMN message     jsonb,
    ADD COLUMN user_id     uuid,
    ADD COLUMN lang        text,
    ADD COLUMN placeholder text,
    ADD COLUMN owner       text,
    ADD COLUMN updated_at  timestamptz NOT NULL DEFAULT now();

-- rows from before: their outcome is unknown and none is to be answered again
UPDATE inbound_events SET status = 'answered' WHERE status IN ('received', 'running');

CREATE INDEX inbound_unanswered ON inbound_events (updated_at)
    WHERE status IN ('received', 'running');
