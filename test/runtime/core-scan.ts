// Finds what ties a source file to Node: imports of Node built-ins (`node:fs`, or bare `fs`, `path` ...),
// `require(...)` of them, and reads of Node's globals (`process`, `Buffer`). Works on the TypeScript syntax
// tree, so comments and strings that merely mention `process` are not counted.
import { builtinModules } from 'node:module';
import ts from 'typescript';

export interface Finding {
  line: number;
  what: string;
}

const BUILTINS = new Set(builtinModules.filter((m) => !m.startsWith('_')));
const NODE_GLOBALS = new Set(['process', 'Buffer', '__dirname', '__filename']);

/** True for `node:x`, and for bare names of Node built-ins (`fs`, `fs/promises`, `worker_threads`). */
export function isNodeBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0]);
}

/** True when an identifier is a name being read (not a property name, a key, or a declaration's name). */
function isFreeReference(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
  if (ts.isQualifiedName(parent) && parent.right === node) return false;
  if (
    (ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent) ||
      ts.isEnumMember(parent)) &&
    parent.name === node
  )
    return false;
  if (ts.isBindingElement(parent) && parent.propertyName === node) return false;
  if ((ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent)) && parent.propertyName === node) return false;
  return true;
}

/** Every tie to Node in one file's source text. */
export function scanSource(fileName: string, text: string): Finding[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const findings: Finding[] = [];
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const checkSpecifier = (node: ts.Node, specifier: ts.Node | undefined) => {
    if (specifier && ts.isStringLiteralLike(specifier) && isNodeBuiltin(specifier.text)) {
      findings.push({ line: at(node), what: `imports '${specifier.text}'` });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) checkSpecifier(node, node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      checkSpecifier(node, node.moduleReference.expression);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      checkSpecifier(node, node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      checkSpecifier(node, node.argument.literal);
    } else if (ts.isIdentifier(node) && NODE_GLOBALS.has(node.text) && isFreeReference(node)) {
      findings.push({ line: at(node), what: `reads the Node global '${node.text}'` });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

/**
 * Relative modules a file loads when it is evaluated: static imports and re-exports, not type-only ones
 * (erased) and not `import()` (loaded only when a runtime asks, as the Node pool is).
 */
export function staticRelativeImports(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) {
      const named = statement.importClause?.namedBindings;
      const onlyTypes =
        !statement.importClause?.name &&
        named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes && ts.isStringLiteral(statement.moduleSpecifier)) found.push(statement.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(statement) &&
      !statement.isTypeOnly &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      found.push(statement.moduleSpecifier.text);
    }
  }
  return found.filter((s) => s.startsWith('.'));
}
