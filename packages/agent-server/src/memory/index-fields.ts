/**
 * The texts at a field path of an item's value, for embedding: "$" is the
 * whole value; "a.b" a nested field; "a[0]" / "a[-1]" one element and "a[*]"
 * every element of an array. Strings are embedded as they are, other values
 * as JSON; absent fields and nulls give nothing.
 */
export function textsAtPath(value: unknown, path: string): string[] {
  if (path === "$") return asTexts(value);
  let current: unknown[] = [value];
  for (const step of parsePath(path)) {
    current = current.flatMap((node) => select(node, step));
    if (current.length === 0) return [];
  }
  return current.flatMap(asTexts);
}

type Step = { field: string } | { index: number } | { all: true };

function parsePath(path: string): Step[] {
  const steps: Step[] = [];
  for (const part of path.split(".")) {
    const match = /^([^[\]]*)((?:\[(?:\*|-?\d+)\])*)$/.exec(part);
    if (!match) {
      steps.push({ field: part });
      continue;
    }
    if (match[1]) steps.push({ field: match[1] });
    for (const [, inner] of match[2]!.matchAll(/\[(\*|-?\d+)\]/g)) {
      steps.push(inner === "*" ? { all: true } : { index: Number(inner) });
    }
  }
  return steps;
}

function select(node: unknown, step: Step): unknown[] {
  if ("field" in step) {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return [];
    const child = (node as Record<string, unknown>)[step.field];
    return child === undefined ? [] : [child];
  }
  if (!Array.isArray(node)) return [];
  if ("all" in step) return node;
  const element = node.at(step.index);
  return element === undefined ? [] : [element];
}

function asTexts(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === "string") return value ? [value] : [];
  return [JSON.stringify(value)];
}
