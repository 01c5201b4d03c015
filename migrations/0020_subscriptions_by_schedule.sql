-- Issue 34 item 3: the scheduler works by schedule, not by re-reading every subscription.
-- A schedule's active subscriptions are read (and their fires recorded) in pages along this
-- index, and `groups()` / a change's "is this schedule still used" answer from it.
CREATE INDEX subscriptions_active_by_schedule
    ON subscriptions (at_time, recurrence, tz, (coalesce(calendar, '')), id)
    WHERE status = 'active';

-- How far each schedule has been fired: every active subscription of it has its fire
-- recorded in job_fires up to `fired_through`. A new leader's catch-up starts there instead of
-- re-reading a week of fires for every subscription. Only a shortcut: job_fires' primary key
-- still decides what fires once.
CREATE TABLE job_schedule_marks (
    schedule       text PRIMARY KEY,      -- at_time|recurrence|tz|calendar (as the job ids)
    fired_through  timestamptz NOT NULL
);
