import { GatewayProtocolError, GatewayUnavailableError } from './errors.js';
import { exchangeJson } from './http.js';
import type { DecoderHandle, DecoderSpec } from '../protocols/sidecar.js';

/**
 * The API's client of the sidecar's media decoders (src/sidecar/decoders/routes.ts): start one, read its
 * raw frames as they are decoded, stop it. Frames travel on loopback in one streamed answer, each as a 4-byte
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

  /**
   * The decoder's frames until it ends or `signal` aborts (which also ends the decoder): video frames as PPM
   * pictures (src/protocols/ppm-frames.ts: `readPpmFrame` gives their pixels without a copy), audio as PCM.
   * Each frame is copied once, from the stream's chunks into an array of its own length: a 640x480 frame
   * (921,615 bytes) comes in about 15 chunks, which joining each to the bytes before it copied 15 times.
   */
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
    /** The 4-byte length being read (it may straddle chunks), then the frame being filled. */
    const length = new Uint8Array(4);
    let lengthFilled = 0;
    let frame: Uint8Array | null = null;
    let filled = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        let at = 0;
        while (at < value.length) {
          if (!frame) {
            const n = Math.min(4 - lengthFilled, value.length - at);
            length.set(value.subarray(at, at + n), lengthFilled);
            lengthFilled += n;
            at += n;
            if (lengthFilled < 4) break;
            lengthFilled = 0;
            frame = new Uint8Array(new DataView(length.buffer).getUint32(0));
            filled = 0;
          }
          const n = Math.min(frame.length - filled, value.length - at);
          frame.set(value.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled === frame.length) {
            const whole = frame;
            frame = null;
            yield whole;
          }
        }
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
