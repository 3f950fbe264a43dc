#!/usr/bin/env node
// Berth runs its TypeScript sources and the project's graph modules through tsx.
await import("tsx");
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
