-- WeChat's kept replies become held deliveries of the outbox: one mechanism for everything that
-- must arrive. Each kept reply (in order) is one held delivery for its user's chat, due again when
-- the user next writes; files keep their bytes (stored once in outbox_blobs). kept_replies stays
-- for an adapter run without the bot, which keeps replies itself.

INSERT INTO outbox_blobs (sha256, data)
SELECT encode(sha256(data), 'hex'), data FROM kept_replies WHERE data IS NOT NULL
ON CONFLICT (sha256) DO NOTHING;

INSERT INTO deliveries (key, platform, chat_id, chat, items, source, status, deadline,
                        created_at, last_error)
SELECT 'kept:' || k.id,
       split_part(k.adapter, ':', 1),
       k.recipient,
       jsonb_build_object('platform', split_part(k.adapter, ':', 1), 'chat_id', k.recipient,
                          'thread_id', NULL, 'is_group', false),
       CASE WHEN k.kind = 'text'
            THEN jsonb_build_array(jsonb_build_object(
                     'type', 'text', 'text', k.body, 'markup', 'plain', 'buttons', '[]'::jsonb,
                     'in_reply_to', NULL, 'replaces', NULL))
            ELSE jsonb_build_array(jsonb_build_object(
                     'type', 'file', 'kind', k.kind, 'filename', coalesce(k.filename, 'file'),
                     'mime_type', coalesce(k.mime_type, 'application/octet-stream'),
                     'caption', '', 'in_reply_to', NULL,
                     'blob', encode(sha256(k.data), 'hex')))
       END,
       'kept',
       'held',
       k.created_at + interval '7 days',
       k.created_at,
       'kept while the 48-hour window was closed'
FROM kept_replies k
ORDER BY k.id
ON CONFLICT (key) DO NOTHING;

DELETE FROM kept_replies;
