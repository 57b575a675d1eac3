// The layers of src/, bottom to top (docs/architecture-notes.md, "Lint and layers"). A file may import files of
// its own layer and of the layers below; `npm run lint` (scripts/lint-imports.mjs) fails on an import that
// climbs, on a file of src/ no layer claims, on src/ importing scripts/ or test/, on `node:` outside the Node
// places, and on a cycle. Type-only imports count: a type that climbs drags its module's
// meaning with it (auth/principal.ts once typed itself from services/).

/** Each layer: the paths it claims (a folder ends in '/'), and what it must not import though it sits higher. */
export const LAYERS = [
  {
    name: 'leaf',
    why: 'what every process may import: roles, passwords, constant-time compare, base64, the logger, the version',
    paths: ['src/auth/', 'src/encoding/', 'src/logger.ts', 'src/version.ts'],
  },
  {
    name: 'core',
    why: 'settings, the wire models, the biometric engine and its extractors: pure of the database and the services',
    paths: ['src/config/', 'src/schemas/', 'src/biometrics/', 'src/extraction/'],
  },
  {
    name: 'stores and clients',
    why: 'the repositories (all the SQL), the clients of the sidecar, of Janus and of the licence cloud, and the sidecar protocol',
    paths: ['src/db/', 'src/gateway/', 'src/licensing/', 'src/protocols/'],
  },
  { name: 'services', why: 'the rules: verb(ctx, collaborators, input)', paths: ['src/services/'] },
  {
    name: 'operations',
    why: 'the operation table: one entry per operation of the interface',
    paths: ['src/operations/'],
  },
  { name: 'http', why: 'surfaces, middleware, problem+json, documents', paths: ['src/http/'] },
  { name: 'app', why: 'createApp(deps)', paths: ['src/app.ts'] },
  {
    name: 'processes',
    why: 'the entries of each process and of the package; only the runtime entries build the app',
    paths: ['src/runtime/', 'src/index.ts', 'src/dashboard/', 'src/sidecar/', 'src/sdk/'],
    // The dashboard, the sidecar and the browser SDK are processes (or bundles) of their own beside the app.
    forbid: {
      'src/dashboard/': ['src/app.ts', 'src/http/', 'src/operations/', 'src/services/', 'src/sidecar/'],
      'src/sidecar/': ['src/app.ts', 'src/http/', 'src/operations/', 'src/services/', 'src/dashboard/'],
      'src/sdk/': ['src/app.ts', 'src/http/', 'src/operations/', 'src/services/', 'src/runtime/', 'src/db/'],
    },
  },
];

/** Where Node's built-ins may be imported: the Node processes' own folders, and files that say so by name. */
const NODE_PLACES = [/^src\/runtime\//, /^src\/sidecar\//, /(^|\/)node-[^/]*\.ts$/];

const claims = (path, file) => (path.endsWith('/') ? file.startsWith(path) : file === path);

/** The index in LAYERS of the layer that claims `file`, or -1. */
export function layerOf(file) {
  return LAYERS.findIndex((layer) => layer.paths.some((path) => claims(path, file)));
}

/**
 * What breaks the layering in `graph` (files of src/ only): imports that climb, imports a process must not make,
 * and files no layer claims. Each is one readable line.
 */
export function layerViolations(graph) {
  const out = [];
  for (const [file, parsed] of graph) {
    if (!file.startsWith('src/')) continue;
    const from = layerOf(file);
    if (from < 0) {
      out.push(`${file}: no layer claims this file (scripts/layers.mjs)`);
      continue;
    }
    for (const builtin of parsed.builtins ?? []) {
      if (!NODE_PLACES.some((place) => place.test(file)))
        out.push(`${file} imports ${builtin}: Node-only code lives in src/runtime/ or in a file named node-*.ts`);
    }
    const forbid = Object.entries(LAYERS[from].forbid ?? {}).find(([path]) => claims(path, file))?.[1] ?? [];
    for (const i of parsed.imports) {
      if (/^(scripts|test|bench)\//.test(i.target)) {
        out.push(
          `${file} -> ${i.target}: src/ never imports scripts/, test/ or bench/ (move what both need into src/)`,
        );
        continue;
      }
      if (!i.target.startsWith('src/')) continue; // wasm/models/*.json: the manifests the engine reads
      const to = layerOf(i.target);
      if (to > from) {
        out.push(`${file} -> ${i.target}: '${LAYERS[from].name}' must not import '${LAYERS[to].name}'`);
      } else if (forbid.some((path) => claims(path, i.target))) {
        out.push(`${file} -> ${i.target}: a process of its own must not import the app's ${i.target}`);
      }
    }
  }
  return [...new Set(out)];
}
