import { Hono, type Context } from 'hono';
import { createDiagnostics } from './diagnostics.js';
import type { StaticFiles } from './static-files.js';

/**
 * The dashboard component: a small web application for administrators and adjudicators, run as its own
 * process and reached through the API's dashboard proxy, so its pages share the API's origin and call the
 * public API with a Bearer token. It serves the same static files under both mounts the proxy forwards
 * (`/dashboard/` and `/admin/dashboard/`, full paths), and two diagnostics for checking a proxy in front.
 * Pure: the Node entry (main.ts) reads the files and listens.
 */

/** The page's Content-Security-Policy: its own scripts and styles only; images from blobs it unpacked. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Browser features the pages may use: none, except the camera page, which asks for the camera (and the
 * microphone for face and voice) on this origin only. The API keeps a page's own policy (security-headers.ts).
 */
const NO_DEVICES = 'camera=(), microphone=(), geolocation=()';
const CAMERA_PAGE = 'capture.html';
const CAMERA = 'camera=(self), microphone=(self), geolocation=()';

const MOUNTS = ['/dashboard', '/admin/dashboard'] as const;

function problem(c: Context, status: 404 | 405, title: string, detail: string, headers: Record<string, string> = {}) {
  return c.body(
    JSON.stringify({
      type: `https://bims.dev/problems/${status === 404 ? 'not-found' : 'method-not-allowed'}`,
      title,
      status,
      detail,
    }),
    status,
    {
      'Content-Type': 'application/problem+json',
      ...headers,
    },
  );
}

export function createDashboardApp(files: StaticFiles, options: { maxStreams?: number } = {}) {
  const app = new Hono({ strict: true });
  const diagnostics = createDiagnostics(options);

  // The proxy forwards paths as they came: send the bare root and mounts to the folder, so relative URLs resolve.
  app.get('/', (c) => c.redirect('/dashboard/', 302));
  for (const mount of MOUNTS) {
    app.get(mount, (c) => c.redirect(`${mount}/${new URL(c.req.url).search}`, 301));
    app.all(`${mount}/_diagnostics/echo`, diagnostics.echo);
    app.get(`${mount}/_diagnostics/stream`, diagnostics.stream);
    app.on(['GET', 'HEAD'], `${mount}/*`, (c) => {
      const rest = c.req.path.slice(mount.length + 1);
      const file = files.get(rest === '' ? 'index.html' : rest);
      if (!file) return problem(c, 404, 'Not found', `The dashboard has no file ${rest}`);
      const headers = {
        'Content-Type': file.contentType,
        ETag: file.etag,
        // Revalidated on every load (cheap: 304), so a new version shows up without stale scripts.
        'Cache-Control': 'no-cache',
        'Content-Security-Policy': CSP,
        'Permissions-Policy': rest === CAMERA_PAGE ? CAMERA : NO_DEVICES,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
      };
      if (c.req.header('if-none-match') === file.etag) return c.body(null, 304, headers);
      return c.body(file.bytes as Uint8Array<ArrayBuffer>, 200, headers);
    });
    app.all(`${mount}/*`, (c) =>
      problem(
        c,
        405,
        'Method not allowed',
        `The dashboard serves files with GET; ${c.req.method} ${c.req.path} changes nothing here`,
        { Allow: 'GET, HEAD' },
      ),
    );
  }
  app.notFound((c) =>
    problem(c, 404, 'Not found', `The dashboard lives under /dashboard/ and /admin/dashboard/, not ${c.req.path}`),
  );
  return app;
}
