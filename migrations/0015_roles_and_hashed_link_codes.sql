-- Security in depth (issue #27).
--
-- 1. /link codes are stored as their SHA-256, like web sign-in links: what the database holds
--    cannot be typed as a code. Codes live ten minutes; the plain ones are simply dropped.
DELETE FROM link_codes;
ALTER TABLE link_codes DROP COLUMN code;  -- and the primary key on it
ALTER TABLE link_codes ADD COLUMN code_hash bytea NOT NULL PRIMARY KEY;
