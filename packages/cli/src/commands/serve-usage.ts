/** `berth dev --help` and `berth serve --help`. */
export const DEV_USAGE = `Usage: berth dev [dir-or-langgraph.json] [options]

Serves a LangGraph.js project for development: on loopback, without authentication, data in SQLite under --data-dir.
Restarts the server when a source file (.ts, .js, .json, .css...), langgraph.json or an .env file under the project's
folder changes (node_modules, .git and dot-folders aside), printing what changed and when the new server answers;
threads, runs and the store survive in the database. A run in flight gets BERTH_SHUTDOWN_GRACE_SECONDS (default 10) to
finish, then resumes from its last checkpoint in the new server.

  --port <n>          Port (default 2024; 0 picks a free one, kept across reloads)
  --host <addr>       127.0.0.1 (default), ::1 or localhost
  --data-dir <dir>    SQLite directory (default .berth/ beside langgraph.json)
  --no-reload         One process, no watching
  --json-logs         Log JSON lines (the default when stdout is not a terminal)
  --pretty-logs       Log lines formatted to read (the default on a terminal)
  -h, --help          This help

Prints where the API, its docs (/docs) and LangGraph Studio are once it serves. While the project does not load (from the
first start on), it keeps running and its port answers every request, /ok too, 503 with the load error until a change fixes
it; --no-reload exits 1 instead. A port in use, or a path without langgraph.json, exits 1.

DATABASE_URL (postgres://...) and REDIS_URL (redis://...) switch to the scale-out backends.
`;

export const SERVE_USAGE = `Usage: berth serve [dir-or-langgraph.json] [options]

Serves a project in production (never reloads). BERTH_API_KEY requires that key of every request but GET /ok.

  --port <n>                Port (default PORT, else 2024; 0 picks a free one)
  --host <addr>             Address (default 127.0.0.1)
  --data-dir <dir>          SQLite directory (default .berth/ beside langgraph.json)
  --role api|worker|all     What this process does (default BERTH_ROLE, else all; a worker given --port answers GET /ok there)
  --workers <n>             Runs executing at once in this process (default BERTH_WORKERS or 100)
  -h, --help                This help

DATABASE_URL (postgres://...) and REDIS_URL (redis://...) switch to the scale-out backends (docs/scaling.md).
`;
