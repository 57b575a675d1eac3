import type { DongleCounter, DongleUpdateState } from './document.js';
import type { SidecarDongle } from '../protocols/sidecar.js';
import { fetchWithin, LicensingUnavailableError } from './http.js';

/** The sidecar refused a request for a reason of the domain (no such dongle, hardware not writable). */
export class DongleRefusedError extends Error {
  override name = 'DongleRefusedError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The API's client of the sidecar's dongle routes (GET/POST /v1/dongles...). The API never imports sidecar
 * code; it only speaks this small JSON protocol with the shared Bearer token.
 */
export class DongleClient {
  constructor(private readonly options: { url: string; token?: string; timeoutMs: number }) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    if (!this.options.token)
      throw new LicensingUnavailableError(
        'sidecar',
        'the dongles are not configured on this server',
        undefined,
        'no sidecar token is configured (BIMS_SIDECAR_TOKEN), so the dongles cannot be reached',
      );
    const { status, text } = await fetchWithin(
      'sidecar',
      `${this.options.url}${path}`,
      {
        method,
        headers: {
          Authorization: `Bearer ${this.options.token}`,
          Accept: 'application/json',
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      },
      this.options.timeoutMs,
    );
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      throw new LicensingUnavailableError(
        'sidecar',
        `the sidecar answered ${status} with a body that is not JSON`,
        status,
      );
    }
    if (status === 401)
      throw new LicensingUnavailableError(
        'sidecar',
        'the sidecar refused our token',
        401,
        'the sidecar refused our token (BIMS_SIDECAR_TOKEN differs from its own)',
      );
    if (status === 404 && json?.error === 'not-found')
      throw new LicensingUnavailableError('sidecar', 'the sidecar has no dongle routes (an older sidecar?)', 404);
    if (status >= 400 && status < 500 && json?.detail) throw new DongleRefusedError(status, String(json.detail));
    if (status !== 200) throw new LicensingUnavailableError('sidecar', `the sidecar answered ${status}`, status);
    return json as T;
  }

  async list(): Promise<SidecarDongle[]> {
    return (await this.call<{ dongles: SidecarDongle[] }>('GET', '/v1/dongles')).dongles;
  }

  /** A signed dump (compact JWS) of one dongle, recording `counters` on it. */
  dump(dongleId: string | undefined, counters: DongleCounter[]): Promise<{ fileName: string; jws: string }> {
    return this.call('POST', `/v1/dongles/dump${dongleId ? `?dongleId=${encodeURIComponent(dongleId)}` : ''}`, {
      counters,
    });
  }

  applyUpdate(jws: string): Promise<DongleUpdateState> {
    return this.call('POST', '/v1/dongles/update', { package: jws });
  }

  updateStatus(): Promise<DongleUpdateState> {
    return this.call('GET', '/v1/dongles/update-status');
  }
}
