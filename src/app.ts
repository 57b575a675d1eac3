import { Hono } from 'hono';
import { bodyLimitError } from './http/body-limit.js';
import { everyRequest } from './http/every-request.js';
import { FixedPathRouter } from './http/fixed-path-router.js';
import { HTTPException } from 'hono/http-exception';
import type { Services } from './services/index.js';
import { DomainError } from './services/errors.js';
import { problemResponse } from './http/problem.js';
import type { AppEnv } from './http/env.js';
import { mountOperations } from './http/mount.js';
import { operationTable } from './operations/index.js';
import { recordException } from './services/exceptions/record.js';
import { mountPlatformRoutes } from './http/platform-routes.js';
import { mountDocs } from './http/docs.js';
import { mountMetrics } from './http/metrics-route.js';
import { unroutedAnswer } from './http/method-not-allowed.js';

/** What the runtime entry hands the app. */
export interface AppDeps {
  services: Services;
  /** The caller's address from the runtime's own bindings (Node socket, Deno info, Workers header). */
  clientAddress?: (request: Request, env: unknown) => string;
  /** A request header by its lower-case name, read the runtime's cheapest way (Node: the IncomingMessage's record). */
  readHeader?: (request: Request, env: unknown, name: string) => string | undefined;
  /** Static assets (Swagger UI) for the docs page, read by the runtime from its own storage. */
  readAsset?: (name: string) => Promise<Uint8Array | null>;
}

/**
 * Build the whole HTTP application. Pure: no environment reads, no I/O at construction; the runtime entry
 * connects the database and builds the services first.
 *
 * @example const app = createApp({ services }); const res = await app.request('/health');
 */
export function createApp(deps: AppDeps) {
  // Fixed paths (/health, /admin/subjects ...) matched by a map lookup; see FixedPathRouter for why not RegExpRouter.
  const app = new Hono<AppEnv>({ strict: true, router: new FixedPathRouter() });
  const { services } = deps;
  const config = services.ctx.config;

  // Request id, security headers, body limit, metric and log line: one layer (src/http/every-request.ts).
  app.use(
    '*',
    everyRequest({
      services,
      corsOrigins: config.BIMS_CORS_ORIGINS,
      maxBodyBytes: config.BIMS_MAX_BODY_BYTES,
      clientAddress: deps.clientAddress,
      readHeader: deps.readHeader,
    }),
  );

  mountPlatformRoutes(app);
  mountMetrics(app);
  const registries = mountOperations(app, operationTable);
  mountDocs(app, registries, deps.readAsset);

  app.notFound(unroutedAnswer(app));

  app.onError(async (error, c) => {
    if (error instanceof DomainError) return problemResponse(c, error);
    // A body read that passed the size limit (the counting stream's error, possibly wrapped by the runtime).
    const tooLarge = bodyLimitError(error);
    if (tooLarge) return problemResponse(c, tooLarge);
    if (error instanceof HTTPException && error.status < 500) {
      const code =
        error.status === 413 ? 'payload-too-large' : error.status === 415 ? 'unsupported-media-type' : 'validation';
      return problemResponse(c, new DomainError(code, error.message || 'Bad request'));
    }
    // Ours: record it with its stack, answer with the id only.
    const id = await recordException(services.ctx, error, {
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      operationId: c.get('operationId'),
      accountId: c.get('principal')?.accountId ?? null,
      surface: c.get('surface'),
    });
    return problemResponse(
      c,
      new DomainError('internal', `An internal error occurred; it was recorded as exception ${id}`, {
        exceptionId: id,
      }),
    );
  });

  return app;
}

export type App = ReturnType<typeof createApp>;
