import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Only for the checkpointer conformance suite; unit tests use node:test.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL(".", import.meta.url)),
    include: ["*.vitest.ts"],
    globals: true, // the suite calls describe/it/expect as globals
  },
});
