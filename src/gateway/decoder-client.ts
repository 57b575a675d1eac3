import { GatewayProtocolError, GatewayUnavailableError } from './errors.js';
import { exchangeJson } from './http.js';
import type { DecoderHandle, DecoderSpec } from '../protocols/sidecar.js';

/**
 * The API's client of the sidecar's media decoders (src/sidecar/decoders/routes.ts): start one, read its
 * JPEG frames as they are decoded, stop it. Frames travel on loopback in one streamed answer, each as a 4-byte
 * big-endian length and the image.
 */
export class DecoderClient {
  constructor(private readonly options: { url: string; token?: string; timeoutMs: number }) {}

  async open(spec: DecoderSpec): Promise<DecoderHandle> {
    const { status, body } = await exchangeJson(
      'sidecar',
      `${this.options.url}/v1/decoders`,
      { method: 'POST', body: spec, headers: this.auth() },
      this.options.timeoutMs,
    );
    if (status === 503)
      throw new GatewayUnavailableError('sidecar', 'the media decoder is unavailable', undefined, JSON.stringify(body));
    if (status === 429)
      throw new GatewayUnavailableError(
        'sidecar',
        'this account already holds as many media decoders as it may',
        undefined,
        JSON.stringify(body),
      );
    const handle = body as DecoderHandle | null;
    if (status !== 201 || !handle?.id)
      throw new GatewayProtocolError(
        'sidecar',
        `the sidecar answered ${status} to a decoder request`,
        status,
        JSON.stringify(body),
      );
    return handle;
  }

  /** The decoder's frames until it ends or `signal` aborts (which also ends the decoder). */
  async *frames(id: string, signal: AbortSignal): AsyncGenerator<Uint8Array> {
    const response = await fetch(`${this.options.url}/v1/decoders/${encodeURIComponent(id)}/frames`, {
      headers: this.auth(),
      signal,
    });
    if (response.status !== 200 || !response.body)
      throw new GatewayProtocolError(
        'sidecar',
        `the sidecar answered ${response.status} for decoder frames`,
        response.status,
      );
    const reader = response.body.getReader();
    let pending = new Uint8Array(0);
    try {
      for (;;) {
        while (pending.length >= 4) {
          const length = new DataView(pending.buffer, pending.byteOffset, 4).getUint32(0);
          if (pending.length < 4 + length) break;
          yield pending.slice(4, 4 + length);
          pending = pending.subarray(4 + length);
        }
        const { done, value } = await reader.read();
        if (done) return;
        const joined = new Uint8Array(pending.length + value.length);
        joined.set(pending);
        joined.set(value, pending.length);
        pending = joined;
      }
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    } finally {
      void reader.cancel().catch(() => {});
    }
  }

  async close(id: string): Promise<void> {
    await exchangeJson(
      'sidecar',
      `${this.options.url}/v1/decoders/${encodeURIComponent(id)}`,
      { method: 'DELETE', headers: this.auth() },
      this.options.timeoutMs,
    ).catch(() => {});
  }

  private auth(): Record<string, string> {
    if (!this.options.token)
      throw new GatewayUnavailableError('sidecar', 'the media gateway is not configured on this server');
    return { Authorization: `Bearer ${this.options.token}` };
  }
}
