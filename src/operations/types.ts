import type { z } from 'zod';
import type { Services } from '../services/index.js';
import type { Principal } from '../services/auth/principal.js';
import type { FormSpec } from './form-spec.js';
import type { FieldNamer } from '../schemas/field-names.js';
import type { Role, Surface } from '../auth/roles.js';

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
  /** The request's names for the places of its body, for the errors a handler or service builds (a form's parts). */
  fields: FieldNamer;
  principal: Principal;
  services: Services;
  surface: Surface;
  /** The raw request, for the few handlers that stream or negotiate content (downloads, QR codes). */
  request: Request;
  /** The caller's network address as the runtime saw it (for X-Forwarded-For). */
  clientAddress: string;
}

/**
 * A JSON answer that also sets headers (an attachment's name, no-store): `data` is shaped by the operation's
 * response schema like a plain answer. Made by `jsonAnswer`.
 */
export class JsonAnswer<T> {
  // A private field makes the type nominal: only `jsonAnswer` (and a PresentedJson) makes one.
  readonly #data: T;
  constructor(
    data: T,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    this.#data = data;
  }

  /** A getter, so that an answer made of its text (operations/presented-json.ts) can parse it only when asked. */
  get data(): T {
    return this.#data;
  }
}

/** A JSON answer with headers; `data` must fit the response schema (checked by `tsc`, shaped when sent). */
export function jsonAnswer<T>(data: T, headers: Readonly<Record<string, string>>): JsonAnswer<T> {
  return new JsonAnswer(data, headers);
}

/**
 * A JSON answer streamed while it is produced (a large export), with headers. `T` is what the producer's
 * typed encoder writes (e.g. `exportException`), checked against the response schema's input by `tsc`; the
 * bytes are not re-validated.
 */
export class StreamedJson<T> {
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: never read; it makes the type nominal, as above
  readonly #made = true;
  // `T` only types the answer: the stream's items were typed where they were encoded.
  declare readonly items: T;
  constructor(
    readonly body: ReadableStream<Uint8Array>,
    readonly headers: Readonly<Record<string, string>>,
  ) {}
}

/** A JSON answer streamed as its producer writes it; `T` states what the producer's typed encoder writes. */
export function streamedJson<T>(
  body: ReadableStream<Uint8Array>,
  headers: Readonly<Record<string, string>>,
): StreamedJson<T> {
  return new StreamedJson<T>(body, headers);
}

declare const mediaTypeBrand: unique symbol;
declare const emptyStatusBrand: unique symbol;
/** A finished answer in a media type the operation declares in `response.content` (files, images, streams). Exported
 * with EmptyResponse because the package's declarations (npm run build) name them in handlers' return types. */
export type MediaResponse<T extends string> = Response & { readonly [mediaTypeBrand]: T };
/** A finished answer without a body, with a status the operation declares in `emptyResponses`. */
export type EmptyResponse<S extends number> = Response & { readonly [emptyStatusBrand]: S };

/**
 * An answer whose body is in `mediaType`, one of the operation's `response.content` types (`tsc` refuses any
 * other). `charset` is added to the Content-Type for text formats.
 */
export function mediaAnswer<T extends string>(
  mediaType: T,
  body: BodyInit | null,
  options: { charset?: 'utf-8'; headers?: Readonly<Record<string, string>> } = {},
): MediaResponse<T> {
  const contentType = options.charset ? `${mediaType}; charset=${options.charset}` : mediaType;
  return new Response(body, { headers: { 'Content-Type': contentType, ...options.headers } }) as MediaResponse<T>;
}

/** A response made elsewhere and passed on unchanged (the dashboard proxy): the operation declares `*\/*`. */
export function passedThrough(response: Response): MediaResponse<'*/*'> {
  return response as MediaResponse<'*/*'>;
}

/** An empty answer with one of the operation's `emptyResponses` statuses. */
export function emptyAnswer<S extends number>(status: S): EmptyResponse<S> {
  return new Response(null, { status }) as EmptyResponse<S>;
}

type SuccessStatus = 200 | 201 | 202 | 204;

/**
 * What a handler may answer, from its entry: data fitting the response schema's input (the schema shapes it
 * when sent), or that data with headers; a media answer in a declared `response.content` type; an empty
 * answer with a declared `emptyResponses` status; nothing when the entry declares no body at all.
 */
type AnswerOf<P extends ResponseSpec | undefined, E extends EmptyStatuses | undefined> =
  | (P extends { schema: infer S extends z.ZodType }
      ? z.input<S> | JsonAnswer<z.input<S>> | StreamedJson<z.input<S>>
      : never)
  | (P extends { content: infer C } ? MediaResponse<Extract<keyof C, string>> : never)
  | (E extends Partial<Record<infer K extends SuccessStatus, string>> ? EmptyResponse<K> : never)
  | (P extends { schema: z.ZodType } ? never : P extends { content: object } ? never : void);

/** Successful answers without a body, for the document, e.g. `{ 204: 'Nothing waits' }`. */
type EmptyStatuses = Partial<Record<SuccessStatus, string>>;

/**
 * What a hot read (the subject reads, docs/read-cost.md) lets the HTTP layer skip. Each flag is a promise the
 * entry makes about its schemas and handler; the HTTP layer reads them here and nowhere else.
 */
export interface ReadHandling {
  /**
   * A read that changes nothing: a Bearer token's account check rides in the read's own statement (one round trip
   * on PostgreSQL; services/auth/account-check.ts) and is made before anything is answered (http/mount.ts).
   */
  checksAccountInStatement?: true;
  /**
   * Its handler builds the answer in exactly the response schema's shape and key order, so it goes out without
   * the schema's parse (http/answer-check.ts; BIMS_CHECK_ANSWERS=on checks it anyway).
   */
  presentedInShape?: true;
}

/** One response an operation may give, for the OpenAPI document. */
interface ResponseSpec {
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
export interface OperationSpec<
  R extends RequestSpec = any,
  P extends ResponseSpec | undefined = any,
  E extends EmptyStatuses | undefined = any,
> {
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
  response?: P;
  /** Other successful answers without a body, for the document, e.g. `{ 204: 'Nothing waits' }`. */
  emptyResponses?: E;
  /**
   * Problem answers beyond the ones derived from the entry (400, 404, 500; 401, 403, 429 unless open; 413, 415
   * with a body: see http/problem-responses.ts), for the document, e.g. `{ 409: 'The subject id is taken' }`.
   */
  problems?: Partial<Record<ProblemStatus, string>>;
  /** The operation counts against the licence: refused 402 (quota spent) or 403 (expired or invalid licence). */
  licensed?: true;
  /** How the HTTP layer serves the operation as a hot read (the subject reads); nothing special when absent. */
  read?: ReadHandling;
  /** The component outside this process the operation relies on (e.g. 'the media gateway'): 502 when it fails, 503 when it cannot be reached. */
  component?: string;
  /**
   * The handler: validated input in, its answer out, typed from the entry (`AnswerOf`): a field the response
   * schema does not have, or a media type the entry does not declare, fails `tsc`.
   */
  // Method syntax on purpose: the table holds operations of every shape as OperationSpec<any>.
  handle(input: HandlerInput<R>): Promise<NoInfer<AnswerOf<P, E>>>;
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
export function defineOperation<
  R extends RequestSpec = Record<never, never>,
  P extends ResponseSpec | undefined = undefined,
  E extends EmptyStatuses | undefined = undefined,
>(spec: OperationSpec<R, P, E>): OperationSpec<R, P, E> {
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
