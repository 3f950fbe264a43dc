/** Set in the environment of the server process `berth dev` supervises. */
export const SUPERVISED_ENV = "BERTH_DEV_SUPERVISED";

/** What the server process sends its supervisor once it listens. */
export interface ListeningMessage {
  berthDev: "listening";
  url: string;
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  const candidate = message as Partial<ListeningMessage> | null;
  return candidate?.berthDev === "listening" && typeof candidate.url === "string";
}

/** What the server process sends its supervisor when the project does not load: the supervisor answers with it. */
export interface FailedMessage {
  berthDev: "failed";
  reason: string;
}

export function isFailedMessage(message: unknown): message is FailedMessage {
  const candidate = message as Partial<FailedMessage> | null;
  return candidate?.berthDev === "failed" && typeof candidate.reason === "string";
}

const supervised = () => process.env[SUPERVISED_ENV] === "1" && process.send !== undefined;

/**
 * In a server process `berth dev` supervises: die with the supervisor. One
 * killed outright (kill -9) leaves no server behind holding the port and the
 * database, just as a single `berth dev` killed so would not.
 */
export function followSupervisor(): void {
  if (!supervised()) return;
  process.on("disconnect", () => process.kill(process.pid, "SIGKILL"));
  process.channel?.unref();
}

/** Tells the supervisor where the server listens (it keeps that port across reloads). */
export function tellSupervisor(url: string | undefined): void {
  if (supervised() && url) process.send!({ berthDev: "listening", url } satisfies ListeningMessage);
}

/** Tells the supervisor why the server did not start; resolves once sent (the process exits next). */
export function tellSupervisorFailed(reason: string): Promise<void> {
  if (!supervised()) return Promise.resolve();
  return new Promise((resolve) => {
    process.send!({ berthDev: "failed", reason } satisfies FailedMessage, undefined, {}, () => resolve());
  });
}

/** Whether the supervisor prints the start banner (else this process does, once it listens). */
export function hasSupervisor(): boolean {
  return supervised();
}
