import { sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The agent server's own code (src/ or dist/): frames there are how a module got loaded, not where it threw. */
const OWN_CODE = fileURLToPath(new URL("..", import.meta.url));

/** A stack frame's location: `(file:///p/a.ts:2:9)`, `/p/a.js:2:9`, `C:\p\a.js:2:9`. */
const FRAME = /(?:\(|at )((?:file:\/\/)?(?:\/|[A-Za-z]:\\)[^()]*?):(\d+):(\d+)\)?\s*$/;

/**
 * Where a project's module threw: `file:line:column` of the error's first stack frame in the project's own code
 * (not in node_modules, Node's internals or the agent server), or undefined when the stack has none (a syntax error,
 * whose message says where, or a value thrown that is not an Error).
 */
export function throwSite(error: unknown): string | undefined {
  if (!(error instanceof Error) || typeof error.stack !== "string") return undefined;
  for (const line of error.stack.split("\n").slice(1)) {
    if (!line.trimStart().startsWith("at ")) continue;
    const match = FRAME.exec(line);
    if (!match) continue;
    const file = match[1]!.startsWith("file://") ? fileURLToPath(match[1]!) : match[1]!;
    if (file.includes("/node_modules/") || file.includes("\\node_modules\\") || file.startsWith(OWN_CODE)) continue;
    return `${file}:${match[2]}:${match[3]}`;
  }
  return undefined;
}

/** `text` with the project folder's absolute paths (and file: URLs) written relative to it: `/srv/app/src/a.ts` → `src/a.ts`. */
export function withinProject(text: string, projectDir: string): string {
  const folder = projectDir.endsWith(sep) ? projectDir : `${projectDir}${sep}`;
  const url = pathToFileURL(folder).href;
  return text.split(url).join("").split(folder).join("");
}
