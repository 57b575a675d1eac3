/**
 * Headers Node keeps only the first of when a request repeats them (`IncomingMessage.headers` drops the rest),
 * where `Headers.get` joins every copy: these are read from the raw header list instead, so that, say, two
 * Authorization headers read as one joined value (and are refused as malformed) exactly as through `Headers`.
 */
const FIRST_ONLY_IN_NODE = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

type Incoming = { headers?: Record<string, string | string[] | undefined>; rawHeaders?: string[] };

/**
 * A request header from the Node `IncomingMessage`'s own record (@hono/node-server reads it for Host anyway),
 * so that reading one header does not make the adapter build the request's whole `Headers` object from the raw
 * header list. Repeated headers come joined with ", " as `Headers.get` joins them (for the few Node keeps the
 * first of, from the raw list). A request that did not come through the adapter (no `incoming` on the env:
 * `app.request` in tests) is read through its `Headers`.
 *
 * @example createApp({ services, readHeader: readIncomingHeader })
 */
export function readIncomingHeader(request: Request, env: unknown, name: string): string | undefined {
  const incoming = (env as { incoming?: Incoming } | undefined)?.incoming;
  const headers = incoming?.headers;
  if (!headers) return request.headers.get(name) ?? undefined;
  const value = headers[name];
  if (value !== undefined && FIRST_ONLY_IN_NODE.has(name) && incoming.rawHeaders)
    return joinedRaw(incoming.rawHeaders, name);
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Every copy of header `name` in a raw header list (name, value, name, value ...), joined as `Headers.get` joins them. */
function joinedRaw(raw: readonly string[], name: string): string {
  let joined: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length !== name.length || key.toLowerCase() !== name) continue;
    // `Headers` trims each value of surrounding whitespace; Node's parser already has.
    joined = joined === undefined ? raw[i + 1]! : `${joined}, ${raw[i + 1]!}`;
  }
  return joined ?? '';
}
