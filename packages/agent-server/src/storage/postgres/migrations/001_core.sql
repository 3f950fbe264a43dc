-- Assistants, their versions, threads and LangGraph checkpoints: the tables of
-- sqlite/migrations/001_core.sql, in PostgreSQL types.
--
-- JSON columns are JSONB, filtered with @> (GIN indexes where the API filters).
-- Timestamps are timestamptz; the repositories read them back as ISO strings
-- (database.ts), the shape SQLite returns.
-- Text that is sorted or compared is COLLATE "C": byte order, like SQLite's
-- BINARY collation, so sort orders (and ASCII-only lower()) match SQLite's
-- whatever the database's locale.
-- `seq` (bigserial) is the insertion order SQLite gets from rowid: the
-- tie-breaker of sorted searches.

CREATE TABLE assistants (
  seq          bigserial NOT NULL,
  assistant_id text COLLATE "C" PRIMARY KEY,
  graph_id     text COLLATE "C" NOT NULL,
  name         text COLLATE "C" NOT NULL,
  description  text,
  config       jsonb NOT NULL DEFAULT '{}',
  context      jsonb NOT NULL DEFAULT '{}',
  metadata     jsonb NOT NULL DEFAULT '{}',
  version      integer NOT NULL DEFAULT 1,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL
);
CREATE INDEX assistants_graph_id ON assistants (graph_id);
CREATE INDEX assistants_created_at ON assistants (created_at);
CREATE INDEX assistants_metadata ON assistants USING gin (metadata jsonb_path_ops);

CREATE TABLE assistant_versions (
  assistant_id text COLLATE "C" NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  version      integer NOT NULL,
  graph_id     text COLLATE "C" NOT NULL,
  name         text COLLATE "C" NOT NULL,
  description  text,
  config       jsonb NOT NULL DEFAULT '{}',
  context      jsonb NOT NULL DEFAULT '{}',
  metadata     jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (assistant_id, version)
);

CREATE TABLE threads (
  seq         bigserial NOT NULL,
  thread_id   text COLLATE "C" PRIMARY KEY,
  status      text COLLATE "C" NOT NULL DEFAULT 'idle',
  metadata    jsonb NOT NULL DEFAULT '{}',
  config      jsonb NOT NULL DEFAULT '{}',
  "values"    jsonb,
  interrupts  jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX threads_created_at ON threads (created_at);
CREATE INDEX threads_updated_at ON threads (updated_at);
CREATE INDEX threads_status ON threads (status);
-- Thread search by metadata, and assistant deletion with delete_threads.
CREATE INDEX threads_metadata ON threads USING gin (metadata jsonb_path_ops);

-- Checkpoints of every thread, in every (sub)graph namespace.
-- checkpoint_id is a uuid6, so ordering by it (bytewise) is ordering by time.
-- `checkpoint` is the serialized checkpoint without its channel_values: those
-- are the checkpoint_blobs rows named by its channel_versions.
CREATE TABLE checkpoints (
  thread_id            text COLLATE "C" NOT NULL,
  checkpoint_ns        text COLLATE "C" NOT NULL DEFAULT '',
  checkpoint_id        text COLLATE "C" NOT NULL,
  parent_checkpoint_id text COLLATE "C",
  type                 text NOT NULL,
  checkpoint           bytea NOT NULL,
  metadata             jsonb NOT NULL DEFAULT '{}',
  created_at           timestamptz NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
-- A rollback deletes the checkpoints of one run (metadata.run_id).
CREATE INDEX checkpoints_run ON checkpoints (thread_id, (metadata ->> 'run_id'));

-- Channel values, one row per (channel, version) of a thread and namespace,
-- written when a checkpoint advances that channel and shared by every later
-- checkpoint still at that version. Versions are unique across forks (they
-- carry a random suffix), so a (channel, version) never has two values.
-- type 'empty' (blob NULL) marks a version at which the channel has no value.
CREATE TABLE checkpoint_blobs (
  thread_id     text COLLATE "C" NOT NULL,
  checkpoint_ns text COLLATE "C" NOT NULL DEFAULT '',
  channel       text COLLATE "C" NOT NULL,
  version       text COLLATE "C" NOT NULL,
  type          text NOT NULL,
  blob          bytea,
  PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

-- Pending writes of a checkpoint's tasks.
CREATE TABLE checkpoint_writes (
  thread_id     text COLLATE "C" NOT NULL,
  checkpoint_ns text COLLATE "C" NOT NULL DEFAULT '',
  checkpoint_id text COLLATE "C" NOT NULL,
  task_id       text COLLATE "C" NOT NULL,
  task_path     text COLLATE "C" NOT NULL DEFAULT '',
  idx           integer NOT NULL,
  channel       text COLLATE "C" NOT NULL,
  type          text NOT NULL,
  value         bytea NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
