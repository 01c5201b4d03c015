-- Issue 31: scheduled job kinds are one table in code (jobs/kinds.py), so adding a kind needs
-- no migration. The database no longer lists them; a subscription whose kind the running code
-- does not know fails its fire, with the reason in job_fires.detail.
ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS subscriptions_kind_check;
