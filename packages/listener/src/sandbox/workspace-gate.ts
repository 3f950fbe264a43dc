import { readFile, writeFile } from "node:fs/promises";

/**
 * Without a sandbox, every build and server runs as the listener's own user
 * and sees everything it sees: one workspace's code could read another's
 * data and secrets. So such a listener runs the deployments of one workspace
 * only: the first it is given work for, remembered in `file` so that a
 * restart keeps the same one (delete the file to hand the listener to
 * another workspace). `--trust-all-code` lifts the rule.
 */
export class WorkspaceGate {
  private claimed: Promise<string> | undefined;

  constructor(
    private readonly file: string,
    /** Why there is no sandbox, as the probe said. */
    private readonly why: string,
  ) {}

  /** undefined when the workspace's code may run here; otherwise the reason it may not, for the revision's status_message. */
  async refusal(tenantId: string): Promise<string | undefined> {
    this.claimed ??= this.claim(tenantId).catch((error: unknown) => {
      this.claimed = undefined; // tried again next time
      throw error;
    });
    const owner = await this.claimed;
    if (owner === tenantId) return undefined;
    return (
      `This listener runs code without a sandbox (${this.why}), so it runs the deployments of one workspace only (${owner}); ` +
      "start it with --trust-all-code (BERTH_TRUST_ALL_CODE=1) to run every workspace's code as its own user anyway, or give it a sandbox (see docs/security.md)"
    );
  }

  private async claim(tenantId: string): Promise<string> {
    const existing = (await readFile(this.file, "utf8").catch(() => "")).trim();
    if (existing) return existing;
    await writeFile(this.file, `${tenantId}\n`, { mode: 0o600 });
    return tenantId;
  }
}
