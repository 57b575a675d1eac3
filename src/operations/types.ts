import type { z } from 'zod';
import type { Services } from '../services/index.js';
import type { Principal } from '../auth/principal.js';
import type { FormSpec } from '../http/multipart.js';

import type { Role, Surface } from '../auth/roles.js';

/** Declared in auth/roles.ts; re-exported for the operation files that speak of both. */
export type { Role, Surface };
export type HttpMethod = 'get' | 'post' | 'put' | 'delete' | 'patch';
/** The problem statuses an operation may answer (application/problem+json). */
export type ProblemStatus = 400 | 401 | 402 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503;

/** The parts of an operation's request, each a zod schema that validates it. */
export interface RequestSpec {
  query?: z.ZodObject<any>;
  /** A stricter query for some surfaces (e.g. a parameter required on /user), validated and documented there. */
  queryOn?: Partial<Record<Surface, z.ZodObject<any>>>;
  params?: z.ZodObject<any>;
  body?: z.ZodType;
  /** Body media type when it is not JSON (e.g. form-encoded). */
  bodyContentType?: string;
  /** The body may also come as multipart/form-data: which parts are files (photos, recordings) and which JSON. */
  form?: FormSpec;
}

/** A validated part: what its schema outputs, or `Absent` when the operation declares no such part. */
type Parsed<S, Absent> = [S] extends [z.ZodType] ? z.output<S> : Absent;

/**
 * What a handler receives: validated input typed from the operation's own schemas (a field the schema does
 * not have fails `tsc`), the caller, and the services. Without a type argument every part is `any`: only
 * for helpers shared by operations of different shapes.
 */
export interface HandlerInput<R extends RequestSpec = any> {
  query: Parsed<R['query'], Record<never, never>>;
  params: Parsed<R['params'], Record<never, never>>;
  body: Parsed<R['body'], undefined>;
  principal: Principal;
  services: Services;
  surface: Surface;
  /** The raw request, for the few handlers that stream or negotiate content (downloads, QR codes). */
  request: Request;
  /** The caller's network address as the runtime saw it (for X-Forwarded-For). */
  clientAddress: string;
}

/** A handler's answer: data to be shaped by the response schema, or a ready Response (files, redirects). */
export type HandlerResult = unknown | Response;

/** One response an operation may give, for the OpenAPI document. */
export interface ResponseSpec {
  description: string;
  /** JSON body schema; omitted for empty bodies. */
  schema?: z.ZodType;
  /** Non-JSON media types, e.g. { 'image/png': binary, 'application/zip': binary }. */
  content?: Record<string, z.ZodType>;
}

/**
 * One operation of the interface, declared once and mounted on every surface it lists.
 * `path` is the part after the surface prefix, exactly as the seed writes it (trailing slash included).
 */
export interface OperationSpec<R extends RequestSpec = any> {
  /** The seed's operation name; becomes the OpenAPI operationId on every surface. */
  id: string;
  method: HttpMethod;
  path: string;
  surfaces: readonly Surface[];
  /** Prefix on the root surface: '' (none) or '/adjudicator' for the adjudication group. */
  rootPrefix?: '' | '/adjudicator';
  /** Functional area (OpenAPI tag), e.g. "Accounts". */
  area: string;
  summary: string;
  description?: string;
  request?: R;
  /** The success status; 200 unless said otherwise. */
  status?: 200 | 201 | 202 | 204;
  response?: ResponseSpec;
  /** Other successful answers without a body, for the document, e.g. `{ 204: 'Nothing waits' }`. */
  emptyResponses?: Partial<Record<200 | 201 | 202 | 204, string>>;
  /**
   * Problem answers beyond the ones derived from the entry (400, 404, 500; 401, 403, 429 unless open; 413, 415
   * with a body: see http/problem-responses.ts), for the document, e.g. `{ 409: 'The subject id is taken' }`.
   */
  problems?: Partial<Record<ProblemStatus, string>>;
  /** The operation counts against the licence: refused 402 (quota spent) or 403 (expired or invalid licence). */
  licensed?: true;
  /** The component outside this process the operation relies on (e.g. 'the media gateway'): 502 when it fails, 503 when it cannot be reached. */
  component?: string;
  /** The handler: validated input in, data for the response schema (or a ready Response) out. */
  // Method syntax on purpose: the table holds operations of every shape as OperationSpec<any>.
  handle(input: HandlerInput<R>): Promise<HandlerResult>;
  /**
   * Set (to the reason) when the operation takes no credentials on any of its surfaces. Only the dashboard
   * proxy's GET is open: it serves the dashboard's public shell, and every datum the page shows comes from
   * API calls authorised by their own scope. The handler's `principal` is then an anonymous placeholder.
   */
  open?: string;
}

/**
 * Declare an operation: a typed identity, so the table reads as data while the handler's `query`, `params`
 * and `body` are inferred from the schemas in `request`.
 */
export function defineOperation<R extends RequestSpec = Record<never, never>>(spec: OperationSpec<R>): OperationSpec<R> {
  return spec;
}

/** The surface prefix of an operation on one surface. */
export function prefixOf(spec: OperationSpec, surface: Surface): string {
  if (surface === 'admin') return '/admin';
  if (surface === 'user') return '/user';
  return spec.rootPrefix ?? '';
}

/** The role a surface demands of an operation: /admin ADMIN, /adjudicator ADJUDICATOR, /user USER, other root ADMIN. */
export function requiredRole(spec: OperationSpec, surface: Surface): Role {
  if (surface === 'user') return 'USER';
  if (surface === 'root' && spec.rootPrefix === '/adjudicator') return 'ADJUDICATOR';
  return 'ADMIN';
}
