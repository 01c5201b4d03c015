-- Prompt tokens the provider served from its prompt cache (part of prompt_tokens), where it
-- reports them (OpenAI: usage.prompt_tokens_details.cached_tokens); priced at the profile's
-- cached input price in cost_usd.
ALTER TABLE usage ADD COLUMN cached_tokens integer NOT NULL DEFAULT 0;
