// The import graph of src/ (and of the tests, scripts, benches and workers that import it), read with the
// TypeScript compiler's parser (no bundler, no resolver plugin: every specifier in this tree is relative and
// names the .js of a .ts). It answers what `npm run lint` checks (scripts/lint.mjs: cycles, imports that climb
// against the layers) and what issue 34 measures (exports no file imports, files behind an entry).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(ts|mts|js|mjs)$/;

/** Every source file under `dirs` (relative to `root`), tests included, declaration files left out. */
export function listFiles(root, dirs) {
  const out = [];
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'fixtures' || name.startsWith('.')) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(relative(root, path));
    }
  };
  for (const dir of dirs) walk(join(root, dir));
  return out.sort();
}

/** The file a relative specifier names: `./x.js` is `./x.ts` when that exists (how tsc's NodeNext resolves). */
function resolveSpecifier(root, from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(root, dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}.ts`];
  candidates.push(join(base, 'index.ts'));
  for (const candidate of candidates) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate);
  }
  return null;
}

/**
 * One file's imports and exports. An import is `{ target, names, typeOnly, all }`: `names` the imported names
 * (`default` for a default import), `all` when it takes the whole module (`* as`, `export *`, a side-effect
 * import or `import()`); `typeOnly` when tsc erases it (`import type`, or every name marked `type`).
 */
export function parseFile(root, file) {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const imports = [];
  const exports = new Set();
  /** Specifiers of Node's built-in modules (`node:fs`), static or dynamic. */
  const builtins = new Set();
  const hasExport = (node) => node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const add = (specifier, names, typeOnly, all, reexport = false) => {
    if (specifier.startsWith('node:') && !typeOnly) builtins.add(specifier);
    const target = resolveSpecifier(root, file, specifier);
    if (target) imports.push({ target, names, typeOnly, all, reexport });
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const specifier = statement.moduleSpecifier.text;
      if (!clause) {
        add(specifier, [], false, true);
        continue;
      }
      const names = [];
      let all = false;
      let everyType = clause.isTypeOnly;
      if (clause.name) {
        names.push('default');
        everyType = everyType || false;
      }
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) all = true;
      if (bindings && ts.isNamedImports(bindings)) {
        const allTyped = bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
        for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
        if (!clause.name && allTyped) everyType = true;
      }
      add(specifier, names, clause.isTypeOnly || everyType, all);
    } else if (ts.isExportDeclaration(statement)) {
      if (statement.exportClause && ts.isNamedExports(statement.exportClause)) {
        for (const element of statement.exportClause.elements) exports.add(element.name.text);
      }
      if (statement.moduleSpecifier) {
        const specifier = statement.moduleSpecifier.text;
        const clause = statement.exportClause;
        if (!clause) add(specifier, [], statement.isTypeOnly, true, true);
        else if (ts.isNamedExports(clause)) {
          const names = clause.elements.map((e) => (e.propertyName ?? e.name).text);
          const typed = statement.isTypeOnly || clause.elements.every((e) => e.isTypeOnly);
          add(specifier, names, typed, false, true);
        } else add(specifier, [], statement.isTypeOnly, true, true);
      }
    } else if (ts.isExportAssignment(statement)) {
      exports.add('default');
    } else if (hasExport(statement)) {
      const isDefault = statement.modifiers.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      if (isDefault) exports.add('default');
      else if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) exports.add(declaration.name.text);
        }
      } else if (statement.name) exports.add(statement.name.text);
    }
  }
  // import('./x.js') anywhere in the file, and vi.mock / vi.importActual's specifiers in tests.
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0])) {
      const callee = node.expression;
      const dynamic = callee.kind === ts.SyntaxKind.ImportKeyword;
      if (dynamic) add(node.arguments[0].text, [], false, true);
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const name = node.qualifier && ts.isIdentifier(node.qualifier) ? [node.qualifier.text] : [];
      add(node.argument.literal.text, name, true, name.length === 0);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { file, imports, exports: [...exports], builtins: [...builtins] };
}

/** The graph of `files`: file -> its parsed imports and exports. */
export function buildGraph(root, files) {
  const graph = new Map();
  for (const file of files) graph.set(file, parseFile(root, file));
  return graph;
}

/**
 * The strongly connected components of more than one file (Tarjan's algorithm) over the edges `keep` admits:
 * every file of a component reaches every other, so each is one cycle or several knotted together.
 */
export function cycles(graph, keep = () => true) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const edges = (file) => [
    ...new Set(
      graph
        .get(file)
        .imports.filter((i) => keep(file, i) && graph.has(i.target))
        .map((i) => i.target),
    ),
  ];
  const strong = (start) => {
    // Iterative, so a long chain of imports cannot overflow the stack.
    const work = [[start, 0]];
    indices.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [file, i] = frame;
      const next = edges(file);
      if (i < next.length) {
        frame[1]++;
        const target = next[i];
        if (!indices.has(target)) {
          indices.set(target, index);
          low.set(target, index++);
          stack.push(target);
          onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), indices.get(target)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(file)));
      }
      if (low.get(file) === indices.get(file)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== file);
        if (component.length > 1) components.push(component.sort());
      }
    }
  };
  for (const file of graph.keys()) if (!indices.has(file)) strong(file);
  return components.sort((a, b) => b.length - a.length);
}

/** The files `entry` loads when it runs (value imports only: tsc erases the others). */
export function reachable(graph, entry, keep = (_from, i) => !i.typeOnly) {
  const seen = new Set([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const i of graph.get(file)?.imports ?? []) {
      if (keep(file, i) && graph.has(i.target) && !seen.has(i.target)) {
        seen.add(i.target);
        queue.push(i.target);
      }
    }
  }
  return seen;
}

/**
 * Exports of `files` that nothing imports by name, whole-module imports and `export *` counting as using every
 * export. `importers(file)` says whose imports count (e.g. only src/, to find what only tests use).
 */
export function unusedExports(graph, files, importers = () => true) {
  const used = new Map();
  const everything = new Set();
  for (const [from, parsed] of graph) {
    if (!importers(from)) continue;
    for (const i of parsed.imports) {
      if (i.all) everything.add(i.target);
      const names = used.get(i.target) ?? new Set();
      for (const name of i.names) names.add(name);
      used.set(i.target, names);
    }
  }
  const out = [];
  for (const file of files) {
    if (everything.has(file)) continue;
    const names = used.get(file) ?? new Set();
    for (const name of graph.get(file).exports) if (!names.has(name)) out.push(`${file}: ${name}`);
  }
  return out;
}
