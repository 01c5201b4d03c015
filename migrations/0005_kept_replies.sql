-- Replies a platform refused for now (WeChat: the user's 48-hour window closed or its quota
-- used, 45015 / 45047), kept until the user next writes and then delivered in order. A row is
-- deleted only once its reply was delivered or definitively refused, so a restart loses none.
-- Files are kept as their bytes: a temporary media id expires, the upload is done again.

CREATE TABLE kept_replies (
    id          bigserial PRIMARY KEY,  -- the delivery order
    adapter     text NOT NULL,          -- the adapter and its app: 'wechat:<appid>', 'wecom:...'
    recipient   text NOT NULL,          -- the user: an openid, a WeCom user id
    kind        text NOT NULL CHECK (kind IN ('text', 'image', 'document')),
    body        text NOT NULL DEFAULT '',  -- the text of a text reply
    filename    text,
    mime_type   text,
    data        bytea,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'text') = (data IS NULL))
);
CREATE INDEX kept_replies_recipient ON kept_replies (adapter, recipient, id);
