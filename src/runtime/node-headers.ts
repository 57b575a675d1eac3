/**
 * A request header from the Node `IncomingMessage`'s own record (@hono/node-server reads it for Host anyway),
 * so that reading one header does not make the adapter build the request's whole `Headers` object from the raw
 * header list. Repeated headers come joined with ", " as `Headers.get` joins them. A request that did not come
 * through the adapter (no `incoming` on the env: `app.request` in tests) is read through its `Headers`.
 *
 * @example createApp({ services, readHeader: readIncomingHeader })
 */
export function readIncomingHeader(request: Request, env: unknown, name: string): string | undefined {
  const headers = (env as { incoming?: { headers?: Record<string, string | string[] | undefined> } } | undefined)
    ?.incoming?.headers;
  if (!headers) return request.headers.get(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
