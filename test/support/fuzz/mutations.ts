import fc from 'fast-check';
import type { OperationSpec } from '../../../src/operations/types.js';
import type { Surface } from '../../../src/auth/roles.js';
import {
  jsonSchemaOf,
  jsonType,
  METACHARS,
  nodesOf,
  REMOVE,
  replaceAt,
  typesOf,
  validish,
  type Hints,
  type JsonSchema,
} from './schema-arb.js';

/**
 * Requests for one operation: a plausible request built from its schemas (schema-arb.ts), then broken in one
 * way. Each mutation says whether the operation must refuse the result (`mustReject`): only when the
 * breakage is certain to violate the declared schema (a wrong JSON type where no union could take it, a
 * required field removed, an unknown field on a strict object, malformed JSON, a foreign media type...).
 * Mutations that merely make values nasty (metacharacters, hostile images) may legitimately succeed.
 */

export interface FuzzRequest {
  /** The kind of mutation, e.g. 'body: wrong type'. */
  kind: string;
  /** What was done to the request in detail, for failure reports. */
  label: string;
  method: string;
  /** Path and query string. */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  mustReject: boolean;
}

export interface PartHints {
  params: Hints;
  query: Hints;
  body: Hints;
}

/** Fields that carry base64. */
const BASE64_FIELDS = new Set(['image', 'audio', 'template', 'data']);
const BAD_BASE64 = ['@@@@', 'abc', '=AAA', 'QUJD\nREVG', 'QUJD====', 'QU JD', '-_-_'];
const WRONG_TYPED = [42, 'text', true, null, [], {}];
const NUMBER_EDGES = [1e308, -1e308, 2 ** 53 + 2, -0, 0.5, 2147483648, -1];
const NOT_JSON = ['not json at all', '{"a":', '\u0000', "{'single': 'quotes'}", 'NaN', '{"a":1}}', '[1,2,'];
const FOREIGN_TYPES = [
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
];
const ACCEPTS = [
  '*/*',
  'image/svg+xml',
  'application/json',
  'text/html;q=0, */*;q=0',
  ';;;',
  'image/png, application/json;q=0.5',
  'x/'.repeat(2000),
];
const BAD_UTF8 = [
  [0xff, 0xfe],
  [0xc3, 0x28],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xc0, 0xaf],
];
/** Segments pasted into a path raw (not re-encoded), where the router and the parameter decoder meet them. */
const RAW_SEGMENTS = [
  '%00',
  '..%2F..%2Fetc%2Fpasswd',
  '%',
  '%ZZ',
  '%C0%AE%C0%AE',
  '%E0%A4%A',
  ';jsessionid=1',
  '%2e%2e',
  'a%2Fb',
];

const enc = new TextEncoder();

function serialiseQuery(query: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value])
      q.append(key, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) is written as the bytes a careless
 * encoder would produce for it (ED A0 80: UTF-8 of a surrogate, itself invalid UTF-8), a case worth sending.
 */
function encodeSegment(value: string): string {
  return [...value].map((ch) => (/[\ud800-\udfff]/.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch))).join('');
}

function fillPath(template: string, params: Record<string, unknown>, raw: Record<string, string> = {}): string {
  return template
    .replace(/\{(\w+)\}/g, (_, name: string) => raw[name] ?? encodeSegment(String(params[name] ?? 'x')))
    .replace(/\*\*$/, raw['**'] ?? 'some/page');
}

function deepArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Out of the schema's numeric range, or not an integer where one is required. */
function numberRejected(schema: JsonSchema, v: number): boolean {
  const types = typesOf(schema);
  if (types?.has('integer') && !Number.isInteger(v)) return true;
  if (schema.minimum !== undefined && v < schema.minimum) return true;
  if (schema.exclusiveMinimum !== undefined && v <= schema.exclusiveMinimum) return true;
  if (schema.maximum !== undefined && v > schema.maximum) return true;
  return false;
}

/** Strings for a query key that its schema cannot take, or null when any string would do. */
function wrongQueryValue(schema: JsonSchema): string | null {
  if (schema.anyOf || schema.oneOf) return null;
  if (schema.enum) return 'NOT_A_VALUE';
  if (schema.type === 'integer' || schema.type === 'number') return 'abc';
  if (schema.format === 'date-time') return 'yesterday';
  if (schema.format === 'uuid') return 'not-a-uuid';
  if (schema.pattern && !new RegExp(schema.pattern).test('~~nope~~')) return '~~nope~~';
  return null;
}

type Draw = {
  params: any;
  query: any;
  body: any;
  kind: string;
  pick: number;
  pick2: number;
  accept: string | null;
  surface: Surface;
};

/** The arbitrary of broken requests for one operation. `images`/`audio` are base64 payloads by name. */
export function requestsFor(
  spec: OperationSpec,
  hints: PartHints,
  images: Record<string, string>,
  audio: Record<string, string>,
): fc.Arbitrary<FuzzRequest> {
  const req = spec.request ?? {};
  const paramsSchema = req.params ? jsonSchemaOf(req.params) : null;
  const querySchema = req.query ? jsonSchemaOf(req.query) : null;
  const bodySchema = req.body ? jsonSchemaOf(req.body) : null;
  const carriesBody = spec.method !== 'get';
  const hasImages = bodySchema !== null && JSON.stringify(bodySchema).includes('"image"');
  const hasAudio = bodySchema !== null && JSON.stringify(bodySchema).includes('"audio"');

  const kinds: fc.WeightedArbitrary<string>[] = [{ weight: 2, arbitrary: fc.constant('as generated') }];
  const add = (weight: number, ...names: string[]) =>
    names.forEach((n) => kinds.push({ weight, arbitrary: fc.constant(n) }));
  if (bodySchema) {
    add(3, 'body: wrong type', 'body: required field removed', 'body: unknown field', 'body: metacharacters');
    add(2, 'body: huge string', 'body: deep nesting', 'body: null', 'body: number edge', 'body: bad base64');
    add(
      1,
      'body: invalid UTF-8',
      'body: truncated JSON',
      'body: not JSON',
      'body: foreign media type',
      'body: no media type',
      'body: wrong root type',
      'body: empty',
    );
    // Image-bearing bodies: hostile images are a minority of their runs (about one in seven), the extractor being
    // the slow part; enough that the standard budget (30 runs per operation) sends more than ten.
    if (hasImages) add(6, 'body: hostile image');
    if (hasAudio) add(1, 'body: hostile audio');
  } else if (carriesBody) add(1, 'unexpected body');
  if (querySchema)
    add(
      3,
      'query: unknown key',
      'query: wrong type',
      'query: metacharacters',
      'query: repeated key',
      'query: huge value',
    );
  add(1, 'query: garbage');
  if (paramsSchema || spec.path.endsWith('**')) add(4, 'path: metacharacters', 'path: raw segment', 'path: wrong type');

  const draw = fc.record({
    surface: fc.constantFrom(...spec.surfaces),
    params: paramsSchema ? validish(paramsSchema, hints.params) : fc.constant({}),
    query: querySchema ? validish(querySchema, hints.query) : fc.constant({}),
    body: bodySchema ? validish(bodySchema, hints.body) : fc.constant(undefined),
    kind: fc.oneof(...kinds),
    pick: fc.nat(),
    pick2: fc.nat(),
    accept: fc.option(fc.constantFrom(...ACCEPTS), { freq: 4 }),
  });

  return draw.map((d: Draw) => build(spec, d, { paramsSchema, querySchema, bodySchema }, images, audio));
}

function build(
  spec: OperationSpec,
  d: Draw,
  schemas: { paramsSchema: JsonSchema | null; querySchema: JsonSchema | null; bodySchema: JsonSchema | null },
  images: Record<string, string>,
  audio: Record<string, string>,
): FuzzRequest {
  const { bodySchema, querySchema, paramsSchema } = schemas;
  const prefix = d.surface === 'admin' ? '/admin' : d.surface === 'user' ? '/user' : (spec.rootPrefix ?? '');
  const params = d.params as Record<string, unknown>;
  let query = (d.query ?? {}) as Record<string, unknown>;
  let body: unknown = d.body;
  let text: string | undefined;
  let bytes: Uint8Array | undefined;
  let contentType: string | null = 'application/json';
  const raw: Record<string, string> = {};
  let queryTail = '';
  let mustReject = false;
  let label = d.kind;
  const nodes = bodySchema ? nodesOf(body, bodySchema) : [];
  const choose = <T>(list: readonly T[]) => list[d.pick2 % list.length]!;
  const pickNode = (filter: (n: (typeof nodes)[number]) => boolean) => {
    const fitting = nodes.filter(filter);
    return fitting.length ? fitting[d.pick % fitting.length]! : null;
  };
  const at = (path: (string | number)[]) => path.reduce<any>((v, k) => v?.[k], body);
  const where = (path: (string | number)[]) => `body${path.map((p) => `.${p}`).join('')}`;

  switch (d.kind) {
    case 'body: wrong type': {
      const node = pickNode(() => true)!;
      const types = typesOf(node.schema);
      const candidates = WRONG_TYPED.filter((v) => !types || !types.has(jsonType(v)));
      body = replaceAt(body, node.path, choose(candidates.length ? candidates : WRONG_TYPED));
      mustReject = types !== null && !node.inUnion && candidates.length > 0;
      label += ` at ${where(node.path)}`;
      break;
    }
    case 'body: required field removed': {
      const node = pickNode((n) => (n.schema.required ?? []).some((k: string) => at(n.path)?.[k] !== undefined));
      if (node) {
        const key = choose((node.schema.required as string[]).filter((k) => at(node.path)?.[k] !== undefined));
        body = replaceAt(body, [...node.path, key], REMOVE);
        mustReject = !node.inUnion;
        label += `: ${where([...node.path, key])}`;
      }
      break;
    }
    case 'body: unknown field': {
      const node = pickNode((n) => n.schema.additionalProperties === false && jsonType(at(n.path)) === 'object');
      if (node) {
        const key = choose(['unexpected', '__proto__', 'constructor', '$where', 'a.b', '']);
        const target = { ...at(node.path) };
        // Defined, not assigned: `__proto__` must become an own key that JSON.stringify writes out.
        Object.defineProperty(target, key, {
          value: { injected: true },
          enumerable: true,
          configurable: true,
          writable: true,
        });
        body = replaceAt(body, node.path, target);
        mustReject = !node.inUnion;
        label += ` '${key}' at ${where(node.path)}`;
      }
      break;
    }
    case 'body: metacharacters': {
      const node = pickNode((n) => typeof at(n.path) === 'string');
      if (node) {
        body = replaceAt(body, node.path, choose(METACHARS));
        label += ` at ${where(node.path)}`;
      }
      break;
    }
    case 'body: huge string': {
      const node = pickNode((n) => typeof at(n.path) === 'string') ?? pickNode(() => true)!;
      const size = choose([70_000, 1_100_000]);
      body = replaceAt(body, node.path, 'A'.repeat(size));
      const types = typesOf(node.schema);
      mustReject =
        !node.inUnion &&
        types !== null &&
        (!types.has('string') || (node.schema.maxLength !== undefined && node.schema.maxLength < size));
      label += ` (${size}) at ${where(node.path)}`;
      break;
    }
    case 'body: deep nesting': {
      const node = pickNode(() => true)!;
      const depth = choose([100, 5000, 100_000]);
      // Spliced into the text: building 100,000 nested arrays as objects would take the test's stack.
      const marker = '"__deep__"';
      text = JSON.stringify(replaceAt(body, node.path, '__deep__')).replace(marker, deepArray(depth));
      const types = typesOf(node.schema);
      mustReject = !node.inUnion && types !== null && !types.has('array');
      label += ` (${depth}) at ${where(node.path)}`;
      break;
    }
    case 'body: null': {
      const node = pickNode(() => true)!;
      body = replaceAt(body, node.path, null);
      const types = typesOf(node.schema);
      mustReject = !node.inUnion && types !== null && !types.has('null');
      label += ` at ${where(node.path)}`;
      break;
    }
    case 'body: number edge': {
      const node = pickNode((n) => typeof at(n.path) === 'number');
      if (node) {
        const v = choose(NUMBER_EDGES);
        body = replaceAt(body, node.path, v);
        mustReject = !node.inUnion && numberRejected(node.schema, v);
        label += ` ${v} at ${where(node.path)}`;
      }
      break;
    }
    case 'body: bad base64': {
      const node = pickNode((n) => BASE64_FIELDS.has(String(n.path.at(-1))) && typeof at(n.path) === 'string');
      if (node) {
        body = replaceAt(body, node.path, choose(BAD_BASE64));
        mustReject = !node.inUnion;
        label += ` at ${where(node.path)}`;
      }
      break;
    }
    case 'body: hostile image':
    case 'body: hostile audio': {
      const field = d.kind.endsWith('image') ? 'image' : 'audio';
      const pool = field === 'image' ? images : audio;
      const node = pickNode((n) => n.path.at(-1) === field);
      if (node) {
        const name = choose(Object.keys(pool));
        body = replaceAt(body, node.path, pool[name]);
        label += ` '${name}' at ${where(node.path)}`;
      }
      break;
    }
    case 'body: invalid UTF-8': {
      const json = enc.encode(JSON.stringify(body));
      const value = JSON.stringify(body).search(/":"/);
      const cut = value >= 0 ? value + 3 : Math.min(1, json.length);
      bytes = new Uint8Array([...json.subarray(0, cut), ...choose(BAD_UTF8), ...json.subarray(cut)]);
      // JSON between systems must be UTF-8 (RFC 8259); the service decodes strictly rather than repair.
      mustReject = true;
      break;
    }
    case 'body: truncated JSON': {
      const full = JSON.stringify(body);
      text = full.slice(0, d.pick % Math.max(1, full.length));
      mustReject = true;
      break;
    }
    case 'body: not JSON':
      text = choose(NOT_JSON);
      mustReject = true;
      break;
    case 'body: foreign media type':
      contentType = choose(FOREIGN_TYPES);
      mustReject = true;
      label += ` ${contentType}`;
      break;
    case 'body: no media type':
      contentType = null;
      break;
    case 'body: wrong root type': {
      const types = typesOf(bodySchema!);
      const candidates = [42, 'text', true, null, [], {}].filter((v) => !types || !types.has(jsonType(v)));
      body = choose(candidates);
      mustReject = types !== null;
      break;
    }
    case 'body: empty':
      text = '';
      mustReject = true;
      break;
    case 'unexpected body':
      bytes = new Uint8Array(d.pick % 4096).map((_, i) => (i * 31 + d.pick2) & 0xff);
      contentType = choose(['application/octet-stream', 'application/json']);
      break;
    case 'query: unknown key':
      query = { ...query, [choose(['unexpected', '__proto__', 'constructor', 'sort[]', 'a.b'])]: '1' };
      mustReject = querySchema?.additionalProperties === false;
      break;
    case 'query: wrong type': {
      const props = Object.entries((querySchema?.properties ?? {}) as Record<string, JsonSchema>)
        .map(([k, s]) => [k, wrongQueryValue(s)] as const)
        .filter(([, v]) => v !== null);
      if (props.length) {
        const [key, value] = props[d.pick % props.length]!;
        query = { ...query, [key]: value };
        mustReject = true;
        label += ` ${key}=${value}`;
      }
      break;
    }
    case 'query: metacharacters': {
      const keys = Object.keys(querySchema?.properties ?? {});
      if (keys.length) {
        const key = keys[d.pick % keys.length]!;
        query = { ...query, [key]: choose(METACHARS) };
        label += ` in ${key}`;
      }
      break;
    }
    case 'query: repeated key': {
      const keys = Object.keys(querySchema?.properties ?? {});
      if (keys.length) {
        const key = keys[d.pick % keys.length]!;
        query = { ...query, [key]: [query[key] ?? '1', choose(METACHARS)] };
        label += ` ${key}`;
      }
      break;
    }
    case 'query: huge value': {
      const keys = Object.keys(querySchema?.properties ?? {});
      if (keys.length) {
        const key = keys[d.pick % keys.length]!;
        query = { ...query, [key]: 'A'.repeat(100_000) };
        label += ` ${key}`;
      }
      break;
    }
    case 'query: garbage':
      queryTail = choose(['&%ZZ=%E0%A4%A', '&=&&=', '&a=%00', '&%00=1', '&x=' + '%25'.repeat(500)]);
      break;
    case 'path: metacharacters':
    case 'path: raw segment':
    case 'path: wrong type': {
      const names = [...spec.path.matchAll(/\{(\w+)\}|\*\*$/g)].map((m) => m[1] ?? '**');
      const name = names[d.pick % names.length]!;
      const integer = typesOf((paramsSchema?.properties ?? {})[name] ?? {})?.has('integer') ?? false;
      if (d.kind === 'path: metacharacters') {
        const v = choose(METACHARS.filter((m) => m !== ''));
        raw[name] = name === '**' ? v.split('/').map(encodeSegment).join('/') : encodeSegment(v);
        // Identifiers are integers from 1: no metacharacter string is one.
        mustReject = integer;
      } else if (d.kind === 'path: raw segment') {
        raw[name] = choose(RAW_SEGMENTS);
      } else {
        raw[name] = choose(['abc', '1.5', '-1', '0', '99999999999', 'NaN']);
        mustReject = integer;
      }
      label += ` ${name}=${raw[name]}`;
      break;
    }
  }

  const url = `${prefix}${fillPath(spec.path, params, raw)}${serialiseQuery(query)}${queryTail ? (serialiseQuery(query) ? queryTail : `?${queryTail.slice(1)}`) : ''}`;
  const headers: Record<string, string> = {};
  if (d.accept) headers.accept = d.accept;
  let payload: string | Uint8Array | undefined;
  if (spec.method !== 'get') {
    if (bytes) payload = bytes;
    else if (text !== undefined) payload = text;
    else if (bodySchema) payload = JSON.stringify(body);
  }
  if (payload !== undefined && contentType) headers['content-type'] = contentType;
  return { kind: d.kind, label, method: spec.method.toUpperCase(), url, headers, body: payload, mustReject };
}
