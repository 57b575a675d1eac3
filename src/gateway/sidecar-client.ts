import { GatewayProtocolError, GatewayUnavailableError } from './errors.js';
import { exchangeJson } from './http.js';
import type { JanusEndpoints, SidecarJanusReport } from '../protocols/sidecar.js';

/**
 * The API's client of the sidecar. The sidecar only tells us where Janus is; the API then speaks to Janus
 * directly on loopback, so each gateway call costs one local hop. Reports are cached briefly (two seconds)
 * while Janus runs, and dropped whenever Janus stops answering so a restart is noticed at once.
 */
export class SidecarClient {
  private cached: { report: SidecarJanusReport; at: number } | null = null;

  constructor(private readonly options: { url: string; token?: string; timeoutMs: number; cacheMs?: number }) {}

  /** The sidecar's current report, fresh from it (no cache). */
  async report(): Promise<SidecarJanusReport> {
    if (!this.options.token) {
      throw new GatewayUnavailableError(
        'sidecar',
        'the media gateway is not configured on this server',
        undefined,
        'no sidecar token is configured (BIMS_SIDECAR_TOKEN), so the media gateway cannot be reached',
      );
    }
    const { status, body } = await exchangeJson(
      'sidecar',
      `${this.options.url}/v1/janus`,
      { method: 'GET', headers: { Authorization: `Bearer ${this.options.token}` } },
      this.options.timeoutMs,
    );
    if (status === 401)
      throw new GatewayProtocolError(
        'sidecar',
        'the sidecar refused our token',
        401,
        'the sidecar refused our token (BIMS_SIDECAR_TOKEN differs from its own)',
      );
    const report = body as SidecarJanusReport | null;
    if (status !== 200 || !report?.janus?.url)
      throw new GatewayProtocolError('sidecar', `the sidecar answered ${status} without a Janus report`, status);
    this.cached = { report, at: Date.now() };
    return report;
  }

  /** Janus's endpoints, or {@link GatewayUnavailableError} naming Janus's state when it is not running. */
  async endpoints(): Promise<JanusEndpoints> {
    const hit = this.cached && Date.now() - this.cached.at < (this.options.cacheMs ?? 2000) ? this.cached.report : null;
    const report = hit ?? (await this.report());
    if (report.state !== 'running') {
      this.cached = null;
      // Janus's own failure (a missing library, the script that installs it) is for the operator's log.
      throw new GatewayUnavailableError(
        'janus',
        `the media gateway is ${report.state}`,
        report.state,
        report.lastError ?? undefined,
      );
    }
    return report.janus;
  }

  /** Forget the cached report, e.g. after Janus stopped answering. */
  invalidate(): void {
    this.cached = null;
  }
}
