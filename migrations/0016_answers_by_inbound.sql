-- An answer belongs to its inbound message (house rule 15): every conversation row a message's
-- run writes (the user's turn, tool calls and results, the answer, a cut-short mark) carries
-- the inbound row's id, and a run resumed after a crash finds its own question and answer by
-- that id. Finding them by position (the latest answer after the user's row) picked another
-- question's answer when two runs of one chat interleaved across a crash.
ALTER TABLE messages
    ADD COLUMN inbound_id bigint REFERENCES inbound_events (id) ON DELETE SET NULL;
CREATE INDEX messages_inbound ON messages (inbound_id, id) WHERE inbound_id IS NOT NULL;

-- Rows from before: the user's turn is linked through its platform message id (unique per
-- platform and chat); answers are not (by position they may be another question's), so a
-- message still unanswered at the upgrade is asked again rather than shown the wrong answer.
UPDATE messages m SET inbound_id = e.id
FROM conversations c, inbound_events e
WHERE m.role = 'user' AND m.platform_message_id IS NOT NULL
  AND c.id = m.conversation_id
  AND e.platform = c.platform AND e.chat_id = c.chat_id AND e.message_id = m.platform_message_id;

-- Why a message ended `failed` (a poison message's error, a run's failure), for the operator.
ALTER TABLE inbound_events ADD COLUMN error text;
