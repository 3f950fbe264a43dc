-- Status conditions: the tables of sqlite/migrations/008_status_conditions.sql,
-- in PostgreSQL types (see 001_control_plane.sql). subject_id is a revision's
-- or a deployment's id.

CREATE TABLE status_conditions (
  subject_id    text COLLATE "C" PRIMARY KEY,
  deployment_id text COLLATE "C" NOT NULL,
  conditions    jsonb NOT NULL,
  observed      jsonb
);
CREATE INDEX status_conditions_deployment ON status_conditions (deployment_id);

-- A revision's timeline also holds events that move no status (a server
-- restarted); a move's type and reason follow from its status (NULL here).
ALTER TABLE revision_events ADD COLUMN type text COLLATE "C";
ALTER TABLE revision_events ADD COLUMN reason text COLLATE "C";
