-- The note a run puts under its answer ("offline analyst", "figures not found in the tools'
-- results are unverified", "cut off at the length limit"), kept with the answer: an answer shown
-- again (after a restart, on the web page, on a share page) is shown with its label.
ALTER TABLE messages ADD COLUMN label text NOT NULL DEFAULT '';
