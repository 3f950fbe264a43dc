import { parseArgs } from "node:util";
import { BASE_IMAGE_USAGE } from "../usage.js";
import { parsedOrError } from "../process.js";
import { containerEngineFromEnv } from "../settings.js";

/**
 * `berth base-image`: builds, in a container engine, the image the official
 * CLI's local `langgraphjs deploy` can start from (`--base-image`), and
 * prints its name.
 */
export async function baseImageCommand(argv: string[]): Promise<number> {
  const parsed = parsedOrError(() => parseArgs({ args: argv, options: { engine: { type: "string" } } }));
  if (parsed instanceof Error) {
    process.stderr.write(`berth base-image: ${parsed.message}\n\n${BASE_IMAGE_USAGE}`);
    return 2;
  }
  const { buildLangGraphJsApiImage, connectEngine } = await import("@berth/listener");
  let engine: Awaited<ReturnType<typeof connectEngine>>;
  try {
    const fromEnv = containerEngineFromEnv();
    engine = await connectEngine(parsed.values.engine ?? fromEnv.address, { baseImage: fromEnv.baseImage });
  } catch (error) {
    process.stderr.write(`berth base-image: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    const tag = await buildLangGraphJsApiImage(engine, (line) => {
      if (line.level === "error") process.stderr.write(`${line.message}\n`);
    });
    process.stdout.write(`${tag}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`berth base-image: ${(error as Error).message}\n`);
    return 1;
  }
}
