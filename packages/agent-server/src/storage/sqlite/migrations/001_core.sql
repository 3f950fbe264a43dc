-- Assistants, their versions, threads and LangGraph checkpoints.
-- JSON columns hold UTF-8 JSON text; timestamps are ISO-8601 strings (UTC).

CREATE TABLE assistants (
  assistant_id TEXT PRIMARY KEY,
  graph_id     TEXT NOT NULL,
  name         TEXT NOT NULL,
  description  TEXT,
  config       TEXT NOT NULL DEFAULT '{}',
  context      TEXT NOT NULL DEFAULT '{}',
  metadata     TEXT NOT NULL DEFAULT '{}',
  version      INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX assistants_graph_id ON assistants (graph_id);
CREATE INDEX assistants_created_at ON assistants (created_at);

CREATE TABLE assistant_versions (
  assistant_id TEXT NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  version      INTEGER NOT NULL,
  graph_id     TEXT NOT NULL,
  name         TEXT NOT NULL,
  description  TEXT,
  config       TEXT NOT NULL DEFAULT '{}',
  context      TEXT NOT NULL DEFAULT '{}',
  metadata     TEXT NOT NULL DEFAULT '{}',
  created_at   TEXT NOT NULL,
  PRIMARY KEY (assistant_id, version)
);

CREATE TABLE threads (
  thread_id   TEXT PRIMARY KEY,
  status      TEXT NOT NULL DEFAULT 'idle',
  metadata    TEXT NOT NULL DEFAULT '{}',
  config      TEXT NOT NULL DEFAULT '{}',
  "values"    TEXT,
  interrupts  TEXT NOT NULL DEFAULT '{}',
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX threads_created_at ON threads (created_at);
CREATE INDEX threads_updated_at ON threads (updated_at);
CREATE INDEX threads_status ON threads (status);

-- Checkpoints of every thread, in every (sub)graph namespace.
-- checkpoint_id is a uuid6, so ordering by it is ordering by time.
-- `checkpoint` is the serialized checkpoint without its channel_values: those
-- are the checkpoint_blobs rows named by its channel_versions.
CREATE TABLE checkpoints (
  thread_id            TEXT NOT NULL,
  checkpoint_ns        TEXT NOT NULL DEFAULT '',
  checkpoint_id        TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  type                 TEXT NOT NULL,
  checkpoint           BLOB NOT NULL,
  metadata             TEXT NOT NULL DEFAULT '{}',
  created_at           TEXT NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);

-- Channel values, one row per (channel, version) of a thread and namespace,
-- written when a checkpoint advances that channel and shared by every later
-- checkpoint still at that version. Versions are unique across forks (they
-- carry a random suffix), so a (channel, version) never has two values.
-- type 'empty' (blob NULL) marks a version at which the channel has no value.
CREATE TABLE checkpoint_blobs (
  thread_id     TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  channel       TEXT NOT NULL,
  version       TEXT NOT NULL,
  type          TEXT NOT NULL,
  blob          BLOB,
  PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

-- Pending writes of a checkpoint's tasks.
CREATE TABLE checkpoint_writes (
  thread_id     TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  task_id       TEXT NOT NULL,
  task_path     TEXT NOT NULL DEFAULT '',
  idx           INTEGER NOT NULL,
  channel       TEXT NOT NULL,
  type          TEXT NOT NULL,
  value         BLOB NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
