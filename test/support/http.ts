import { adminAuth } from './databases.js';

interface RequestsApp {
  request(path: string, init?: RequestInit): Response | Promise<Response>;
}

/**
 * One request to the app without a socket: a JSON body (objects are serialised, strings sent as given, so
 * tests can send malformed JSON), admin credentials unless `auth` says otherwise (null sends none).
 */
export function send(
  app: RequestsApp,
  method: string,
  path: string,
  body?: unknown,
  auth: string | null = adminAuth,
  headers: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(
    app.request(path, {
      method,
      headers: {
        ...(auth ? { authorization: auth } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}
