#!/usr/bin/env node
// Fails when one scope of a TypeScript file declares the same interface, type, class or enum twice. TypeScript merges
// two `interface X` silently, so a copy-pasted declaration drifts unnoticed; Biome's noRedeclare lets it through.
// Run by `npm run lint`. Uses the TypeScript parser bundled with ts-morph (TypeScript 7 has no JS API).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { ts } from "ts-morph";

const files = execFileSync(
  "git",
  ["ls-files", "--cached", "--others", "--exclude-standard", "--", "packages/*.ts", "packages/*.tsx", "packages/*.mts"],
  { encoding: "utf8" },
)
  .split("\n")
  .filter((file) => file && !file.includes("/node_modules/") && !file.endsWith(".d.ts"));

const KINDS = new Map([
  [ts.SyntaxKind.InterfaceDeclaration, "interface"],
  [ts.SyntaxKind.TypeAliasDeclaration, "type"],
  [ts.SyntaxKind.ClassDeclaration, "class"],
  [ts.SyntaxKind.EnumDeclaration, "enum"],
]);

/** `file:line: interface X declared again (first at line N)` for each repeat among `statements`, then inside nested module blocks. */
function duplicatesIn(source, statements, found) {
  const seen = new Map();
  for (const statement of statements) {
    if (ts.isModuleDeclaration(statement) && statement.body && ts.isModuleBlock(statement.body)) {
      duplicatesIn(source, statement.body.statements, found);
      continue;
    }
    const kind = KINDS.get(statement.kind);
    if (!kind || !statement.name) continue;
    const key = `${kind} ${statement.name.text}`;
    const line = source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, line);
    else found.push(`${source.fileName}:${line}: ${key} declared again (first at line ${first})`);
  }
}

const found = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    continue; // listed by git but deleted in the working tree
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  duplicatesIn(source, source.statements, found);
}
if (found.length > 0) {
  console.error(found.join("\n"));
  console.error(`${found.length} duplicate declaration(s): keep one.`);
  process.exit(1);
}
