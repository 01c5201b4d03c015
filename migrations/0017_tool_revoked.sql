-- A person can revoke a generated tool (`bullpen tools revoke NAME`): every version of it
-- leaves the agent's tools at once and is never run again, whatever its tests said.
ALTER TABLE tool_artifacts DROP CONSTRAINT IF EXISTS tool_artifacts_status_check;
ALTER TABLE tool_artifacts ADD CONSTRAINT tool_artifacts_status_check
    CHECK (status IN ('provisional', 'verified', 'deprecated', 'failed', 'revoked'));
