-- Debate reports, reused for the same ticker, panel and question for five days unless a
-- fresh one is asked for (seed 000's report cache). The artifact is the debate JSON; the PDF
-- is kept so a reused report is sent again without rendering.

CREATE TABLE debate_reports (
    id               bigserial PRIMARY KEY,
    ticker           text NOT NULL,
    panel            text NOT NULL CHECK (panel IN ('experts', 'bull_bear')),
    question_key     text NOT NULL DEFAULT '',   -- normalised question; '' for none
    question         text NOT NULL DEFAULT '',
    lang             text NOT NULL DEFAULT 'en',
    offline          boolean NOT NULL DEFAULT false,  -- scored by offline experts
    artifact         jsonb NOT NULL,
    markdown         text NOT NULL,
    pdf              bytea,
    user_id          uuid REFERENCES users(id) ON DELETE SET NULL,
    conversation_id  uuid REFERENCES conversations(id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX debate_reports_reuse
    ON debate_reports (ticker, panel, question_key, lang, offline, created_at DESC);
