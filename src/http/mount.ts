import type { Context, Hono } from 'hono';
import { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { ProblemSchema, z } from '../schemas/common.js';
import type { Services } from '../services/index.js';
import type { Principal } from '../services/auth/principal.js';
import { JsonAnswer, prefixOf, requiredRole, StreamedJson, type OperationSpec } from '../operations/types.js';
import { type Surface } from '../auth/roles.js';
import { requireRole, withoutCredentials } from './auth-middleware.js';
import { clientAddress } from './client-address.js';
import { problemAnswersOf } from './problem-responses.js';
import { queryObject, validate } from './validation.js';
import { readJsonBody } from './json-body.js';
import { documentedAnswer, documentedText } from './answer-check.js';
import { PresentedJson } from '../operations/presented-json.js';
import { jsonAnswer, jsonTextAnswer } from './security-headers.js';
import { formDocument, formFieldNames, isMultipart, readFormBody, samplePaths } from './multipart.js';
import { jsonFieldNames } from '../schemas/field-names.js';
import { shadowedBy, unroutedAnswer } from './method-not-allowed.js';
import type { AppEnv } from './env.js';

/** The full path of an operation on a surface, in OpenAPI form (`/admin/subjects/{subjectId}`). */
function fullPath(spec: OperationSpec, surface: Surface): string {
  return `${prefixOf(spec, surface)}${spec.path}`;
}

/** Hono's form of an OpenAPI path: `{id}` becomes `:id`; a dashboard `**` becomes `*`. */
function honoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1').replace(/\*\*$/, '*');
}

/**
 * The OpenAPI form of a path: a trailing `**` (the dashboard proxy's "everything below") is not a path
 * template, so the document names it as one parameter, `{path}`, that stands for the rest of the path.
 */
function openapiPath(path: string): string {
  return path.replace(/\/\*\*$/, '/{path}');
}

/** The rest-of-path parameter of a `**` route, for the document only (the route itself takes anything). */
const restOfPath = z.strictObject({
  path: z.string().openapi({ description: 'The rest of the path, slashes included; forwarded unchanged' }),
});

/**
 * Static paths must be tried before parameterised ones, so `/subjects/count` is never read as
 * `/subjects/{subjectId}`: sort by the position of the first parameter, latest first, then by length.
 */
function routeOrder(a: string, b: string): number {
  const firstParam = (p: string) => {
    const i = p.search(/[{*]/);
    return i === -1 ? Number.MAX_SAFE_INTEGER : i;
  };
  return firstParam(b) - firstParam(a) || b.length - a.length;
}

/**
 * Mount every operation of the table on every surface it lists, and describe each surface in its own
 * OpenAPI registry. The table is the only place routes are declared.
 */
export function mountOperations(app: Hono<AppEnv>, table: readonly OperationSpec[]): Record<Surface, OpenAPIRegistry> {
  const registries = { admin: new OpenAPIRegistry(), root: new OpenAPIRegistry(), user: new OpenAPIRegistry() };
  const routes: { spec: OperationSpec; surface: Surface; path: string }[] = [];
  for (const spec of table) {
    for (const surface of spec.surfaces) routes.push({ spec, surface, path: fullPath(spec, surface) });
  }
  routes.sort((a, b) => routeOrder(a.path, b.path));
  const staticPaths = routes.filter((r) => !/[{*]/.test(r.path)).map((r) => r.path);
  const unrouted = unroutedAnswer(app);

  for (const { spec, surface, path } of routes) {
    const role = requiredRole(spec, surface);
    const guard = spec.open
      ? withoutCredentials(surface, spec.id)
      : requireRole(role, surface, spec.id, spec.read?.checksAccountInStatement === true);
    const route = honoPath(path);
    const shadowed = new Set(shadowedBy(route, staticPaths));
    if (shadowed.size === 0) app.on(spec.method.toUpperCase(), route, guard, (c) => runOperation(c, spec, surface));
    else {
      // `/subjects/create` is the create operation's path, not a subject named "create" (method-not-allowed.ts).
      const name = route
        .split('/')
        .find((s) => s.startsWith(':'))!
        .slice(1);
      app.on(
        spec.method.toUpperCase(),
        route,
        async (c, next) => (shadowed.has(c.req.param(name) ?? '') ? unrouted(c) : next()),
        guard,
        (c) => runOperation(c, spec, surface),
      );
    }
    registries[surface].registerPath(describe(spec, path, role, surface, shadowed));
  }
  return registries;
}

async function runOperation(c: Context<AppEnv>, spec: OperationSpec, surface: Surface): Promise<Response> {
  // A Bearer check left for the read's statement (auth-middleware.ts) is made before anything goes out: its 401
  // or 403 comes first, whatever the read answered or failed with (a read that carried it made it already).
  const check = c.get('principal').accountCheck;
  if (!check) return answerOperation(c, spec, surface);
  let answer: Response;
  try {
    answer = await answerOperation(c, spec, surface);
  } catch (error) {
    await check.run();
    throw error;
  }
  await check.run();
  return answer;
}

async function answerOperation(c: Context<AppEnv>, spec: OperationSpec, surface: Surface): Promise<Response> {
  const services: Services = c.get('services');
  const principal = c.get('principal');
  const request = spec.request ?? {};
  const params = request.params ? validate(request.params, c.req.param(), 'path') : {};
  const querySchema = request.queryOn?.[surface] ?? request.query;
  // The URL is parsed only for an operation that reads a query (a read of one subject does not).
  const query = querySchema ? validate(querySchema, queryObject(new URL(c.req.url)), 'query') : {};
  const form = request.form && isMultipart(c.req.raw) ? request.form : undefined;
  // A form's failures name its parts (`body.image.1`), not the JSON fields the form becomes, wherever they are found.
  const fields = form ? formFieldNames(form) : jsonFieldNames;
  const raw = form
    ? await readFormBody(c.req.raw, form)
    : request.body
      ? await readJsonBody(
          c.req.raw,
          request.form ? { alsoTaken: 'multipart/form-data', samples: samplePaths(request.form) } : {},
        )
      : undefined;
  const body = request.body ? validate(request.body, raw, 'body', fields) : undefined;
  const result = await spec.handle({
    query,
    params,
    body,
    fields,
    principal,
    services: scopedToCaller(services, principal, c.req.raw),
    surface,
    request: c.req.raw,
    clientAddress: clientAddress(c),
  });
  if (result instanceof Response) return result;
  const status = spec.status ?? 200;
  if (status === 204) return c.body(null, 204);
  if (result instanceof StreamedJson)
    return c.body(result.body, status, { ...result.headers, 'Content-Type': 'application/json' });
  const answering = {
    operationId: spec.id,
    inShape: spec.read?.presentedInShape === true,
    check: services.ctx.config.BIMS_CHECK_ANSWERS === 'on',
  };
  if (result instanceof PresentedJson) {
    const text = documentedText(spec.response?.schema, result.json.text, answering);
    // Unchanged (presented in its schema's shape), it goes out as the bytes made once with the text.
    return jsonTextAnswer(c, text === result.json.text ? result.json.bytes : text, status);
  }
  const answer = result instanceof JsonAnswer ? result : undefined;
  const data = answer ? answer.data : result;
  const shaped = spec.response?.schema ? documentedAnswer(spec.response.schema, data, answering) : data;
  return answer?.headers ? c.json(shaped as object, status, answer.headers) : jsonAnswer(c, shaped, status);
}

/**
 * The services as one request sees them: its extraction jobs wait in its account's queue (accounts are served
 * in turn) and are dropped if the client disconnects before they start (the runtime aborts the request's signal).
 */
function scopedToCaller(services: Services, principal: Principal, request: Request): Services {
  const owner =
    principal.accountId !== null
      ? `account:${principal.accountId}`
      : principal.clientId
        ? `client:${principal.clientId}`
        : `name:${principal.username}`;
  return { ...services, extractors: services.extractors.forRequest(new CallerScope(owner, request)) };
}

/**
 * An extraction scope whose signal is read only when an extraction starts: on Node, reading it builds the whole
 * `Request`. A class, since a getter in an object literal is defined afresh on every request (about 1% of a read).
 */
class CallerScope {
  constructor(
    readonly owner: string,
    private readonly request: Request,
  ) {}

  get signal(): AbortSignal {
    return this.request.signal;
  }
}

function describe(spec: OperationSpec, path: string, role: string, surface: Surface, shadowed: Set<string>) {
  const request = { ...spec.request, query: spec.request?.queryOn?.[surface] ?? spec.request?.query };
  const responses: Record<string, any> = {};
  const okContent: Record<string, { schema: any }> = {};
  if (spec.response?.schema) okContent['application/json'] = { schema: spec.response.schema };
  for (const [type, schema] of Object.entries(spec.response?.content ?? {})) okContent[type] = { schema };
  responses[String(spec.status ?? 200)] = {
    description: spec.response?.description ?? 'Success',
    ...(Object.keys(okContent).length ? { content: okContent } : {}),
  };
  for (const [status, description] of Object.entries(spec.emptyResponses ?? {})) responses[status] = { description };
  for (const [status, { description, types }] of Object.entries(problemAnswersOf(spec))) {
    responses[status] = {
      description: `${description}. Problem type: ${types.join(' or ')}`,
      content: { 'application/problem+json': { schema: ProblemSchema } },
    };
  }
  const scheme = role.toLowerCase();
  const security = spec.open ? [] : [{ [`${scheme}-basic`]: [] }, { [`${scheme}-oauth`]: [role] }];
  const docPath = openapiPath(path);
  const params = excluding(request.params, shadowed) ?? (docPath !== path ? restOfPath : undefined);
  return {
    method: spec.method,
    path: docPath,
    operationId: spec.id,
    tags: [spec.area],
    summary: spec.summary,
    description: [spec.description, spec.open ? `No credentials: ${spec.open}` : `Requires scope ${role}.`]
      .filter(Boolean)
      .join('\n\n'),
    security,
    request: {
      ...(request.query ? { query: request.query } : {}),
      ...(params ? { params } : {}),
      ...(request.body
        ? {
            body: {
              required: true,
              content: {
                [request.bodyContentType ?? 'application/json']: { schema: request.body },
                ...(request.form ? { 'multipart/form-data': formDocument(request.form, request.body) } : {}),
              },
            },
          }
        : {}),
    },
    responses,
  };
}

/** The path parameters with the values another operation's exact path takes stated as excluded (`not: {enum}`). */
function excluding<T extends z.ZodType | undefined>(params: T, shadowed: Set<string>): T {
  const shape = (params as unknown as { shape?: Record<string, z.ZodType> } | undefined)?.shape;
  if (!params || !shape || shadowed.size === 0) return params;
  const [name, schema] = Object.entries(shape)[0]!;
  return (params as unknown as z.ZodObject).extend({
    [name]: schema.openapi({ not: { enum: [...shadowed] } } as object),
  }) as unknown as T;
}
