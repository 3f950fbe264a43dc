import { readFileSync } from "node:fs";

/** A command line that cannot work as given: the message says what to change (exit 2). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export interface CredentialFiles {
  "token-file"?: string;
  "ssh-key-file"?: string;
  "known-hosts-file"?: string;
}

/** An integration's credentials, read from files: never taken on the command line (where other users' `ps` would show them). */
export function credentialsFromFiles(files: CredentialFiles) {
  if (files["token-file"]) return { token: readFileSync(files["token-file"], "utf8").trim() };
  if (files["ssh-key-file"] || files["known-hosts-file"]) {
    if (!files["ssh-key-file"] || !files["known-hosts-file"])
      throw new UsageError("SSH credentials need both --ssh-key-file and --known-hosts-file");
    return {
      ssh_private_key: readFileSync(files["ssh-key-file"], "utf8"),
      known_hosts: readFileSync(files["known-hosts-file"], "utf8"),
    };
  }
  return undefined;
}
