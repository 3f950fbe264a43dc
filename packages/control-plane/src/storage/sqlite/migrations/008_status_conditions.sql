-- Status conditions (docs/control-plane.md, "Conditions and events"): each
-- revision's and deployment's conditions as last recorded, kept for their
-- transition times, and the listener's last observation of a deployment.
-- subject_id is a revision's or a deployment's id.

CREATE TABLE status_conditions (
  subject_id TEXT PRIMARY KEY,
  deployment_id TEXT NOT NULL,
  conditions TEXT NOT NULL,
  observed TEXT
);
CREATE INDEX status_conditions_deployment ON status_conditions (deployment_id);

-- A revision's timeline also holds events that move no status (a server
-- restarted); a move's type and reason follow from its status (NULL here).
ALTER TABLE revision_events ADD COLUMN type TEXT;
ALTER TABLE revision_events ADD COLUMN reason TEXT;
