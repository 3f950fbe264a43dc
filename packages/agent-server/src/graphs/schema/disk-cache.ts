import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { StaticAnalysis } from "./static-analysis.js";
import type { StaticGraphSchemas } from "./types.js";

/** Bump when the analysis gives other schemas for the same sources. */
const ANALYZER_VERSION = "2";

const require = createRequire(import.meta.url);

/** What else the result depends on: the analyzer and the typings it read. */
const TOOLCHAIN = ["ts-morph", "@langchain/langgraph", "@langchain/core"]
  .map((name) => `${name}@${(require(`${name}/package.json`) as { version: string }).version}`)
  .join(" ");

interface CacheEntry {
  files: string[];
  digest: string;
  schemas: StaticGraphSchemas;
}

/**
 * Static schemas on disk, one file per graph module and export, valid while
 * the source files the analysis read keep the contents they had (a digest of
 * them, checked on every read: an edit anywhere in them is a miss).
 */
export class SchemaDiskCache {
  constructor(private readonly dir: string) {}

  read(file: string, exportName: string): StaticGraphSchemas | undefined {
    let entry: CacheEntry;
    try {
      entry = JSON.parse(readFileSync(this.path(file, exportName), "utf8")) as CacheEntry;
    } catch {
      return undefined;
    }
    if (!Array.isArray(entry.files) || entry.digest !== digest(entry.files)) return undefined;
    return entry.schemas;
  }

  /** Best effort: a cache that cannot be written only costs the next start an analysis. */
  write(file: string, exportName: string, analysis: StaticAnalysis): void {
    const entry: CacheEntry = { files: analysis.files, digest: digest(analysis.files), schemas: analysis.schemas };
    const target = this.path(file, exportName);
    mkdirSync(this.dir, { recursive: true });
    const temporary = `${target}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(entry));
    renameSync(temporary, target);
  }

  private path(file: string, exportName: string): string {
    const key = createHash("sha256").update(`${file}\0${exportName}`).digest("hex").slice(0, 32);
    return join(this.dir, `${key}.json`);
  }
}

function digest(files: string[]): string {
  const hash = createHash("sha256").update(`${ANALYZER_VERSION}\0${TOOLCHAIN}\0`);
  for (const file of [...files].sort()) {
    let contents: Buffer | string;
    try {
      contents = readFileSync(file);
    } catch {
      contents = "\0missing";
    }
    hash.update(`${file}\0${contents.length}\0`).update(contents);
  }
  return hash.digest("hex");
}
