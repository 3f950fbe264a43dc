// Imports go one way. Each package's src/ folders are listed from the top
// layer down; a module may import its own layer and any layer below it,
// never one above. A package's root files (server.ts, runtime.ts, ...) wire
// everything together and may import any layer.

/** Layers of each package, top first; folders on one line share a layer. */
const LAYERS = {
  "agent-server": [["http"], ["services"], ["runs"], ["wire"], ["graphs", "config", "tracing", "memory"], ["storage"]],
  "control-plane": [["http"], ["services", "tracing", "api-keys", "oauth"], ["domain"], ["config"], ["storage"]],
  listener: [["listener"], ["router", "sandbox"], ["build", "compute"], ["process", "engine"]],
  cli: [["commands"]],
};

/** Root files every layer of a package may import (leaf utilities that import nothing of their package). */
const LEAVES = { "agent-server": ["logger.ts"], cli: ["process.ts", "settings.ts", "usage.ts"] };

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function layerRules(pkg, layers) {
  const src = `^packages/${escape(pkg)}/src/`;
  const rules = [];
  layers.forEach((layer, index) => {
    const above = layers.slice(0, index).flat();
    if (above.length === 0) return;
    rules.push({
      name: `${pkg}: ${layer.join("/")} imports no layer above it`,
      comment: `${pkg}'s layers, top first: ${layers.map((names) => names.join("/")).join(" → ")}`,
      severity: "error",
      from: { path: `${src}(${layer.join("|")})/` },
      to: { path: `${src}(${above.join("|")})/` },
    });
  });
  const known = [...layers.flat().map((name) => `${name}/`), ...(LEAVES[pkg] ?? [])];
  rules.push({
    name: `${pkg}: layers import no root file but the leaves`,
    severity: "error",
    from: { path: `${src}(${layers.flat().join("|")})/` },
    to: { path: `${src}[^/]+$`, pathNot: `${src}(${(LEAVES[pkg] ?? ["-"]).map(escape).join("|")})$` },
  });
  rules.push({
    name: `${pkg}: every src folder has a layer`,
    comment: `a new folder must be placed in .dependency-cruiser.cjs (known: ${known.join(", ")})`,
    severity: "error",
    from: { path: `${src}[^/]+/`, pathNot: `${src}(${layers.flat().join("|")})/` },
    to: {},
  });
  return rules;
}

module.exports = {
  forbidden: [
    ...Object.entries(LAYERS).flatMap(([pkg, layers]) => layerRules(pkg, layers)),
    {
      name: "packages reach each other by package name, never by a relative path",
      severity: "error",
      from: { path: "^packages/([^/]+)/" },
      to: { path: "^packages/([^/]+)/", pathNot: "^packages/$1/", dependencyTypes: ["local"] },
    },
    {
      name: "no cycles",
      severity: "error",
      from: { path: "^packages/" },
      to: { circular: true },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript API for the cruiser: swc parses the sources.
    parser: "swc",
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules|/fixtures/" },
  },
};
