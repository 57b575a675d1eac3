// What API nodes and matcher shard processes say to each other over NATS: one request subject per shard (its
// replicas share it in a queue group), JSON bodies, errors as NATS service errors (a status and a description
// in the Nats-Service-Error(-Code) headers, as `nats micro` tooling shows them).
import { z } from 'zod';

/** The name every matcher process registers with the NATS service API (`nats micro ls` lists them by it). */
export const MATCHER_SERVICE = 'bims-matcher';

/**
 * The subject shard `shard` of a cluster of `shards` answers on. The count is part of it, so that processes of
 * two layouts (while a cluster grows from S to 2 S shards) never answer for each other.
 */
export function shardSubject(prefix: string, shards: number, shard: number): string {
  return `${prefix}.matcher.${shards}.${shard}`;
}

/** The endpoint name of a shard in the service API. */
export function shardEndpoint(shard: number): string {
  return `shard-${shard}`;
}

/** Longest a request may ask a shard to wait for the change log (it is the caller's deadline). */
const MAX_BUDGET_MS = 120_000;

const budgetMs = z.number().int().min(1).max(MAX_BUDGET_MS);
const changeId = z.number().int().min(0);
// A template is a few hundred bytes (docs/template-format.md); 64 KiB leaves room for any version.
const probe = z.base64().max(87_400);

/** A request to a shard; `changeId`: answer only once the change log up to it is applied (read-your-writes). */
export const MatchRequest = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('identify'),
    probe,
    topK: z.number().int().min(1).max(10_000),
    threshold: z.number().min(0).max(200),
    exclude: z.array(z.number().int().min(1)).max(10_000),
    changeId,
    budgetMs,
  }),
  z.strictObject({ op: z.literal('verify'), probe, subjectRef: z.number().int().min(1), changeId, budgetMs }),
  z.strictObject({ op: z.literal('state'), changeId: changeId.optional(), budgetMs }),
]);
export type MatchRequest = z.infer<typeof MatchRequest>;

/** A candidate as a shard names it: the gallery key, the client's identifier, the cosine and the score. */
export interface ShardCandidate {
  subject: string;
  subjectRef: number;
  subjectId: string;
  cosine: number;
  score: number;
}

/** What one shard holds, as it answers a `state` request (and the service API's stats show). */
export interface ShardState {
  shard: number;
  shards: number;
  subjects: number;
  templates: number;
  digest: string;
  /** The change-log id up to which the shard has applied every change. */
  lastChangeId: number;
  versions: Record<string, { subjects: number; templates: number }>;
}

/**
 * A shard's answer; `changeId` is the change-log position it had applied when its search began (at least the
 * request's): the answer holds every change up to it, and maybe some after.
 */
export type MatchReply =
  | { op: 'identify'; shard: number; changeId: number; candidates: ShardCandidate[] }
  | { op: 'verify'; shard: number; changeId: number; match: ShardCandidate | null }
  | { op: 'state'; shard: number; state: ShardState };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON bytes of a request or a reply. */
export function encodeMessage(message: MatchRequest | MatchReply): Uint8Array {
  return encoder.encode(JSON.stringify(message));
}

/** A request as a shard receives it, or the reason it is not one (answered 400). */
export function decodeRequest(data: Uint8Array): { request: MatchRequest } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(data));
  } catch {
    return { error: 'the request is not JSON' };
  }
  const parsed = MatchRequest.safeParse(json);
  if (parsed.success) return { request: parsed.data };
  return { error: parsed.error.issues.map((i) => `${i.path.join('.') || 'request'}: ${i.message}`).join('; ') };
}

/** A reply as the caller receives it (from a shard process of the same version). */
export function decodeReply(data: Uint8Array): MatchReply {
  return JSON.parse(decoder.decode(data)) as MatchReply;
}

/** Errors a shard answers with, as service error codes. */
export const ShardErrors = {
  /** The request is malformed (a caller's bug, or a stranger on the subject). */
  badRequest: 400,
  /** Not loaded, or the change log could not be brought to the request's change id within its budget. */
  unavailable: 503,
  /** The search failed. */
  internal: 500,
} as const;
