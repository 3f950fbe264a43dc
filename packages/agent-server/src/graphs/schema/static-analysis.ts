import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Project, ts } from "ts-morph";
import { findSubgraphCandidates } from "./subgraph-finder.js";
import { TypeToSchema } from "./type-to-schema.js";
import type { StaticGraphSchemas, TypedSchemas } from "./types.js";

export interface StaticAnalysis {
  schemas: StaticGraphSchemas;
  /** The project's own source files the program read (not node_modules): what the result depends on. */
  files: string[];
}

const PROBE_FILE = "__berth_schema_probe__.ts";

const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  // Bundler resolution takes `./x.js` for `./x.ts`, extensionless paths and package exports alike.
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  allowImportingTsExtensions: true,
  // No DOM or @types/node: state types rarely use them, and parsing them was half the time.
  lib: ["lib.es2022.d.ts"],
  types: [],
};

/** As at run time (pin-packages.ts), these resolve from Berth's install whoever imports them. */
const PINNED_PACKAGES = /^@langchain\/(core|langgraph|langgraph-checkpoint)(\/.*)?$/;
const ANCHOR = fileURLToPath(import.meta.url);

/**
 * Type-level helpers of the probe: from what a module exports (a compiled
 * graph, a builder, a Promise or a factory of either) to the types the
 * schemas describe. State is the update type, as the reference server gives.
 */
const HELPERS = `
import type { BaseMessage as __BaseMessage } from "@langchain/core/messages";
import type { StateDefinition as __StateDefinition, UpdateType as __UpdateType } from "@langchain/langgraph";
type __Resolved<T> = T extends (...args: any[]) => infer R ? Awaited<R> : Awaited<T>;
type __Compiled<T> = __Resolved<T> extends infer G ? (G extends { compile(...args: any[]): infer C } ? C : G) : never;
type __Field<G, K extends PropertyKey> = G extends { [P in K]: infer V } ? V : never;
type __Config<G> = G extends { builder: { _configSchema: infer S } }
  ? Exclude<S, undefined> extends infer D extends __StateDefinition ? __UpdateType<D> : never
  : never;
type __Configurable<T> = T extends (config: infer P, ...args: any[]) => any ? (P extends { configurable?: infer K } ? K : never) : never;
export type __berth_message = __BaseMessage;
`;

const FIELDS = {
  state: (graph: string) => `__Field<__Compiled<${graph}>, "~RunInput">`,
  input: (graph: string) => `__Field<__Compiled<${graph}>, "~InputType">`,
  output: (graph: string) => `__Field<__Compiled<${graph}>, "~OutputType">`,
  config: (graph: string) => `__Config<__Compiled<${graph}>>`,
  configurable: (graph: string) => `__Configurable<${graph}>`,
};

type Field = keyof typeof FIELDS;

/**
 * Reads the JSON schemas of a graph and its subgraphs from the TypeScript
 * types of the module exporting it: a program of the module and a probe
 * module that names the types to read. Slow (seconds): run it off the main thread.
 */
export function analyzeGraphTypes(file: string, exportName: string): StaticAnalysis {
  const project = new Project({
    compilerOptions: COMPILER_OPTIONS,
    skipAddingFilesFromTsConfig: true,
    resolutionHost: pinnedResolution,
  });
  const entry = project.addSourceFileAtPath(file);
  const subgraphs = findSubgraphCandidates(entry.compilerNode, exportName);
  // Subgraphs are usually not exported: the in-memory module exports their types for the probe.
  if (subgraphs.length > 0) {
    entry.insertText(
      entry.getEnd(),
      `\n${subgraphs.map(({ identifier }, index) => `export type __berth_subgraph_${index} = typeof ${identifier};`).join("\n")}\n`,
    );
  }
  const graphs: [string, string][] = [
    ["", `typeof __module.${exportName}`],
    ...subgraphs.map(({ namespace }, index): [string, string] => [namespace, `__module.__berth_subgraph_${index}`]),
  ];
  const probePath = join(dirname(file), PROBE_FILE);
  project.createSourceFile(probePath, probeSource(basename(file), graphs), { overwrite: true });

  const program = project.getProgram().compilerObject;
  const checker = program.getTypeChecker();
  const probe = program.getSourceFile(probePath);
  const moduleSymbol = probe && checker.getSymbolAtLocation(probe);
  if (!moduleSymbol) throw new Error(`the probe module of ${file} did not compile`);
  const exported = new Map(checker.getExportsOfModule(moduleSymbol).map((symbol) => [symbol.getName(), symbol]));
  const typeOf = (name: string) => {
    const symbol = exported.get(name);
    return symbol ? checker.getDeclaredTypeOfSymbol(symbol) : undefined;
  };
  const message = typeOf("__berth_message");
  const converter = new TypeToSchema(checker, message && !(message.flags & ts.TypeFlags.Any) ? message : undefined);
  const schemaOf = (index: number, field: Field) => {
    const type = typeOf(`__berth_${index}_${field}`);
    return type ? converter.root(type) : null;
  };

  const schemas: StaticGraphSchemas = {};
  graphs.forEach(([namespace], index) => {
    const typed: TypedSchemas = {
      state: schemaOf(index, "state"),
      input: schemaOf(index, "input"),
      output: schemaOf(index, "output"),
      config: schemaOf(index, "config") ?? schemaOf(index, "configurable"),
    };
    // A candidate whose type is not a graph gives nothing: it was not a subgraph.
    if (namespace === "" || Object.values(typed).some((schema) => schema !== null)) schemas[namespace] = typed;
  });
  const files = program
    .getSourceFiles()
    .map((source) => source.fileName)
    .filter((name) => name !== probePath && !name.includes("/node_modules/") && !name.startsWith("/node_modules/"));
  return { schemas, files };
}

function probeSource(entryFile: string, graphs: [string, string][]): string {
  const lines = [`import type * as __module from "./${entryFile}";`, HELPERS];
  graphs.forEach(([, graph], index) => {
    for (const [field, type] of Object.entries(FIELDS)) lines.push(`export type __berth_${index}_${field} = ${type(graph)};`);
  });
  return lines.join("\n");
}

function pinnedResolution(host: ts.ModuleResolutionHost, getOptions: () => ts.CompilerOptions) {
  return {
    resolveModuleNames(names: string[], containingFile: string): (ts.ResolvedModuleFull | undefined)[] {
      return names.map((name) => {
        const from = PINNED_PACKAGES.test(name) ? ANCHOR : containingFile;
        return (
          ts.resolveModuleName(name, from, getOptions(), host).resolvedModule ??
          ts.resolveModuleName(name, containingFile, getOptions(), host).resolvedModule
        );
      });
    },
  };
}
