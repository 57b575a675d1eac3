import { toBase64 } from '../encoding/base64.js';

/** How the device authenticates to BIMS: HTTP Basic, an OAuth access token, or a ready Authorization value. */
export type Credentials = { username: string; password: string } | { accessToken: string } | { authorization: string };

/** What `remoteVerify` sends. */
export interface RemoteVerifyRequest {
  /** The enrolled template as the service encrypted it for itself (`encryptedTemplate` of the enrolment or QR answer). */
  encryptedTemplate: string;
  /** The fresh device template: bytes, or their base64 (`DeviceTemplate.template` / `.templateBase64`). */
  template: Uint8Array | string;
  /** When given, the service checks it is the subject inside the encrypted template. */
  subjectId?: string;
}

/** The service's answer. */
export interface RemoteVerifyResult {
  verified: boolean;
  /** Score on the false-acceptance scale (48 = FAR 1e-4), see docs/template-format.md. */
  score: number;
  threshold: number;
  /** The REMOTE_VERIFY operation the service logged. */
  operationUuid: string;
  subjectId?: string;
}

/** A non-2xx answer: `status` and the RFC 9457 problem body (naming the refused field). */
export class RemoteVerifyError extends Error {
  override readonly name = 'RemoteVerifyError';
  constructor(
    readonly status: number,
    readonly problem: unknown,
  ) {
    super(`remoteVerify failed with HTTP ${status}${problemDetail(problem)}`);
  }
}

/** Options of {@link remoteVerify}. */
export interface RemoteVerifyOptions {
  /** Surface to call (default 'user': any account may verify). */
  surface?: 'user' | 'admin' | 'root';
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/**
 * Calls `remoteVerify`: the service decrypts the enrolled template, compares it with the device's and logs the
 * operation. Only templates travel; the photo stays on the device. The page's origin must be listed in the
 * service's BIMS_CORS_ORIGINS when the API lives on another origin.
 *
 * @throws RemoteVerifyError for any non-2xx answer (400 bad template, 422 foreign/tampered ciphertext,
 *   another template version, a replayed probe or an encrypted template no longer bound to a standing
 *   enrolment, 404 deleted subject, 401/403 credentials); the problem's `reason` names which.
 * @example
 * const r = await remoteVerify('https://bims.example', { accessToken }, { encryptedTemplate, template: t.template });
 * if (r.verified) unlock();
 */
export async function remoteVerify(
  baseUrl: string | URL,
  credentials: Credentials,
  request: RemoteVerifyRequest,
  options: RemoteVerifyOptions = {},
): Promise<RemoteVerifyResult> {
  const fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  const prefix = options.surface === 'root' ? '' : `/${options.surface ?? 'user'}`;
  const url = `${String(baseUrl).replace(/\/+$/, '')}${prefix}/operations/remote-verify`;
  const body = {
    encryptedTemplate: request.encryptedTemplate,
    template: typeof request.template === 'string' ? request.template : toBase64(request.template),
    ...(request.subjectId === undefined ? {} : { subjectId: request.subjectId }),
  };
  const res = await fetcher(url, {
    method: 'POST',
    headers: {
      authorization: authorization(credentials),
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify(body),
    signal: options.signal,
  });
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new RemoteVerifyError(res.status, json);
  return json as RemoteVerifyResult;
}

export function authorization(c: Credentials): string {
  if ('authorization' in c) return c.authorization;
  if ('accessToken' in c) return `Bearer ${c.accessToken}`;
  return `Basic ${toBase64(new TextEncoder().encode(`${c.username}:${c.password}`))}`;
}

function problemDetail(problem: unknown): string {
  const p = problem as { title?: string; detail?: string } | null;
  return p?.detail ? `: ${p.detail}` : p?.title ? `: ${p.title}` : '';
}
