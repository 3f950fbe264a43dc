// The real `berth` binary against a test's control plane: run in an empty folder with a home of its own, connected by
// BERTH_URL, BERTH_API_KEY and BERTH_TENANT_ID; and what a deployment's agent answers.
import { Client } from "@langchain/langgraph-sdk";
import { type CommandRun, type ControlPlane, newDataDir, runBerth } from "@berth/test-support";

export type Berth = (args: string[], options?: { input?: string; env?: Record<string, string> }) => Promise<CommandRun>;

export function berthAgainst(cp: ControlPlane): Berth {
  const cwd = newDataDir("berth-cli-cwd-");
  const home = newDataDir("berth-cli-home-");
  return (args, { input, env: extra = {} } = {}) => {
    const env: Record<string, string | undefined> = { ...process.env, HOME: home, XDG_CONFIG_HOME: `${home}/xdg` };
    Object.assign(env, { BERTH_URL: cp.url, BERTH_API_KEY: cp.adminKey, BERTH_TENANT_ID: cp.defaultTenantId }, extra);
    return runBerth(args, { cwd, env, input: input ?? "" });
  };
}

/** The last message the deployment's `agent` graph answers to `text` (the fixture agent: `<GREETING>: <text>`). */
export async function askAgent(cp: ControlPlane, url: string, text: string): Promise<string> {
  const output = await new Client({ apiUrl: url, apiKey: cp.adminKey }).runs.wait(null, "agent", {
    input: { messages: [{ type: "human", content: text }] },
  });
  const messages = (output as { messages: { content: string }[] }).messages;
  return messages.at(-1)?.content ?? "";
}
