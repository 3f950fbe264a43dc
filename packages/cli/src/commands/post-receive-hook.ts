export interface HookTarget {
  integrationName: string;
  /** The integration's absolute webhook URL on the control plane. */
  webhookUrl: string;
  webhookSecret: string;
  /** The node binary the hook runs with. */
  nodePath: string;
}

/**
 * A git `post-receive` hook (a Node script) for the bare repositories of a
 * local integration: for each ref a push updated it sends GitHub's push
 * webhook (`X-GitHub-Event: push`, the body signed in `X-Hub-Signature-256`),
 * naming the repository by its path, which is how a local deployment's
 * `repo_url` reads. The control plane then builds the `build_on_push`
 * deployments tracking that branch. A push is never refused by it: git has
 * accepted the refs before post-receive runs.
 */
export function postReceiveHook({ integrationName, webhookUrl, webhookSecret, nodePath }: HookTarget): string {
  // A shebang cannot quote: a node path with a space is found on PATH instead.
  const shebang = /\s/.test(nodePath) ? "#!/usr/bin/env node" : `#!${nodePath}`;
  return `${shebang}
// post-receive hook of Berth's local git integration ${JSON.stringify(integrationName)}, printed by
// \`berth integrations hook\`. Install it as hooks/post-receive (executable) in each bare repository.
// It holds the integration's webhook secret: keep it readable by the repositories' owner only.
const WEBHOOK_URL = ${JSON.stringify(webhookUrl)};
const WEBHOOK_SECRET = ${JSON.stringify(webhookSecret)};

// Dynamic imports and no top-level await: runs as CommonJS or as an ES module alike.
(async () => {
  const { createHmac, randomUUID } = await import("node:crypto");
  const { realpathSync } = await import("node:fs");
  const { resolve } = await import("node:path");
  // git runs a bare repository's hook in the repository itself; a deployment may name it by either path.
  const path = resolve(".");
  const real = realpathSync(path);
  let input = "";
  for await (const chunk of process.stdin) input += chunk;
  for (const line of input.split("\\n")) {
    const [before, after, ref] = line.trim().split(/\\s+/);
    if (!ref) continue;
    const body = JSON.stringify({
      ref,
      before,
      after,
      repository: { clone_url: real, url: path, git_url: \`file://\${real}\`, html_url: \`file://\${path}\` },
    });
    const signature = \`sha256=\${createHmac("sha256", WEBHOOK_SECRET).update(body).digest("hex")}\`;
    try {
      const response = await fetch(WEBHOOK_URL, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "push",
          "x-github-delivery": randomUUID(),
          "x-hub-signature-256": signature,
        },
        body,
      });
      const answer = await response.text();
      if (response.ok) {
        const revisions = JSON.parse(answer).revisions ?? [];
        console.log(\`berth: \${ref}: \${revisions.length} deployment(s) building\`);
      } else {
        console.error(\`berth: \${ref}: the control plane answered \${response.status} \${answer}\`);
        process.exitCode = 1;
      }
    } catch (error) {
      console.error(\`berth: \${ref}: cannot reach \${WEBHOOK_URL}: \${error.cause ?? error}\`);
      process.exitCode = 1;
    }
  }
})();
`;
}
