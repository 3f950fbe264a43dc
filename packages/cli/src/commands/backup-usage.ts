/** Usage texts of `berth backup` and `berth restore` (apart from the commands, so `berth --help` loads neither). */
export const BACKUP_USAGE = `  backup <data-dir> <file>        Copy a SQLite data directory into one tar file while its servers run (the databases,
                                  deployments' databases, uploaded sources and the keys; docs/operations.md)
      --without-key               Leave secrets.key and admin.key out of the file
  restore <file> <data-dir>       Unpack a backup into a new or empty data directory
`;

export const BACKUP_HELP = `Usage: berth backup <data-dir> <file> [--without-key]

Copies a Berth data directory on SQLite into <file>, one gzipped tar archive, while the control plane, listener or agent
server using it keeps running: each database (the control plane's control-plane.sqlite, an agent server's berth.sqlite,
each deployment's listener/deployments/<id>/data/berth.sqlite) through SQLite's online backup API, as one committed
transaction left it; the uploaded sources (uploads/); and the keys, secrets.key (it decrypts every stored secret) and
admin.key. The file is written with mode 0600: it holds the keys, so keep it as you keep them, or pass --without-key and
keep secrets.key apart. Builds, caches and images are not copied: they are rebuilt. With DATABASE_URL the data is in
PostgreSQL: use pg_dump (docs/operations.md).

  --without-key      Leave secrets.key and admin.key out
  -h, --help         This help
`;

export const RESTORE_HELP = `Usage: berth restore <file> <data-dir>

Unpacks a backup made by \`berth backup\` into <data-dir>, which must not exist or be empty; start the control plane
(or agent server) on it afterwards. A backup made --without-key needs the original secrets.key copied into <data-dir>
(or BERTH_SECRETS_KEY set) before the control plane starts.

  -h, --help         This help
`;
