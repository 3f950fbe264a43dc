import { ts } from "ts-morph";

/** A module-level binding that a graph adds as a node, and the namespace it runs under. */
export interface SubgraphCandidate {
  /** "child", or "child|inner" for a subgraph of a subgraph. */
  namespace: string;
  /** The binding's name in the module (a const, let, var or import). */
  identifier: string;
}

/**
 * Finds, by syntax alone, the nodes of the exported graph that are other
 * module-level bindings (`.addNode("child", child)`), then theirs, within the
 * graph's own file. Whether a binding really is a graph is left to its type
 * (candidates whose type is not a graph give no schema). Subgraphs built in
 * functions or called from inside a node are not found.
 */
export function findSubgraphCandidates(source: ts.SourceFile, exportName: string): SubgraphCandidate[] {
  const bindings = moduleBindings(source);
  const root = exportedExpression(source, exportName, bindings);
  if (!root) return [];
  const found: SubgraphCandidate[] = [];
  const visit = (expressions: ts.Node[], prefix: string, seen: Set<string>) => {
    for (const [node, identifier] of addedNodes(expressions)) {
      if (!bindings.has(identifier) || seen.has(identifier)) continue;
      const namespace = prefix ? `${prefix}|${node}` : node;
      found.push({ namespace, identifier });
      visit(graphExpressions(identifier, source, bindings), namespace, new Set([...seen, identifier]));
    }
  };
  visit(root, "", new Set());
  return found;
}

/** Module-level names: variable declarations (with their initializers) and imports. */
function moduleBindings(source: ts.SourceFile): Map<string, ts.Expression | undefined> {
  const bindings = new Map<string, ts.Expression | undefined>();
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) bindings.set(declaration.name.text, declaration.initializer);
      }
    } else if (ts.isImportDeclaration(statement) && statement.importClause && !statement.importClause.isTypeOnly) {
      const clause = statement.importClause;
      if (clause.name) bindings.set(clause.name.text, undefined);
      if (clause.namedBindings && ts.isNamedImports(clause.namedBindings)) {
        for (const element of clause.namedBindings.elements) bindings.set(element.name.text, undefined);
      }
    }
  }
  return bindings;
}

/** The expressions that build the exported graph: its initializer and the statements that extend its builder. */
function exportedExpression(
  source: ts.SourceFile,
  exportName: string,
  bindings: Map<string, ts.Expression | undefined>,
): ts.Node[] | undefined {
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.body && exportsAs(statement) === exportName) {
      // A factory: what it returns, and the bindings it builds that from.
      const returned = returnedExpressions(statement.body);
      return [...returned, ...returned.flatMap((expression) => followIdentifiers(expression, source, bindings))];
    }
    if (exportName === "default" && ts.isExportAssignment(statement)) {
      return [statement.expression, ...followIdentifiers(statement.expression, source, bindings)];
    }
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) {
        if (element.name.text === exportName)
          return graphExpressions((element.propertyName ?? element.name).text, source, bindings);
      }
    }
  }
  return bindings.has(exportName) ? graphExpressions(exportName, source, bindings) : undefined;
}

/** The name an exported function declaration is exported as: its own, or "default". */
function exportsAs(declaration: ts.FunctionDeclaration): string | undefined {
  const kinds = (ts.getModifiers(declaration) ?? []).map((modifier) => modifier.kind);
  if (!kinds.includes(ts.SyntaxKind.ExportKeyword)) return undefined;
  return kinds.includes(ts.SyntaxKind.DefaultKeyword) ? "default" : declaration.name?.text;
}

function returnedExpressions(body: ts.Block): ts.Expression[] {
  const found: ts.Expression[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isReturnStatement(node) && node.expression) found.push(node.expression);
    // Returns of nested functions are theirs, not the factory's.
    if (!ts.isFunctionLike(node)) ts.forEachChild(node, visit);
  };
  ts.forEachChild(body, visit);
  return found;
}

/**
 * What builds a binding: its initializer, the builders it is compiled from
 * (`builder.compile()`), and top-level statements calling methods on them
 * (`builder.addNode(...)`).
 */
function graphExpressions(name: string, source: ts.SourceFile, bindings: Map<string, ts.Expression | undefined>): ts.Node[] {
  const names = new Set([name]);
  const pending = [name];
  const expressions: ts.Node[] = [];
  while (pending.length > 0) {
    const current = pending.pop()!;
    const initializer = bindings.get(current);
    if (initializer) {
      expressions.push(initializer);
      for (const next of calledOn(initializer)) {
        if (bindings.has(next) && !names.has(next)) {
          names.add(next);
          pending.push(next);
        }
      }
    }
  }
  for (const statement of source.statements) {
    if (ts.isExpressionStatement(statement) && calledOn(statement.expression).some((target) => names.has(target))) {
      expressions.push(statement.expression);
    }
  }
  return expressions;
}

function followIdentifiers(
  expression: ts.Expression,
  source: ts.SourceFile,
  bindings: Map<string, ts.Expression | undefined>,
): ts.Node[] {
  return calledOn(expression).flatMap((name) => (bindings.has(name) ? graphExpressions(name, source, bindings) : []));
}

/** The identifier at the root of a call chain (`builder` in `builder.addNode(...).compile()`), or the identifier itself. */
function calledOn(expression: ts.Node): string[] {
  let current: ts.Node = expression;
  for (;;) {
    if (ts.isAwaitExpression(current) || ts.isParenthesizedExpression(current) || ts.isAsExpression(current)) {
      current = current.expression;
    } else if (ts.isCallExpression(current) || ts.isPropertyAccessExpression(current)) {
      current = current.expression;
    } else if (ts.isArrowFunction(current) && !ts.isBlock(current.body)) {
      current = current.body;
    } else {
      break;
    }
  }
  return ts.isIdentifier(current) ? [current.text] : [];
}

/** `child` or `child.compile(...)`: the binding a node action names. */
function graphIdentifier(action: ts.Expression): string | undefined {
  if (ts.isIdentifier(action)) return action.text;
  if (
    ts.isCallExpression(action) &&
    ts.isPropertyAccessExpression(action.expression) &&
    action.expression.name.text === "compile" &&
    ts.isIdentifier(action.expression.expression)
  ) {
    return action.expression.expression.text;
  }
  return undefined;
}

/** `.addNode("name", identifier)` calls in these expressions: [node name, identifier]. */
function addedNodes(expressions: ts.Node[]): [string, string][] {
  const found: [string, string][] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "addNode" &&
      node.arguments.length >= 2
    ) {
      const [name, action] = node.arguments;
      const graph = action && graphIdentifier(action);
      if (ts.isStringLiteralLike(name!) && graph) found.push([name.text, graph]);
    }
    ts.forEachChild(node, visit);
  };
  expressions.forEach(visit);
  return found;
}
