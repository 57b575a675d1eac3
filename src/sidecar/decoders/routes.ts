import type { Hono } from 'hono';
import { z } from 'zod';
import { judgeShare, shareLimits } from '../../gateway/fair-share.js';
import { RtpVideoDecoder } from './rtp-decoder.js';
import type { DecoderHandle } from '../../protocols/sidecar.js';

/** How long a refused caller is told to wait (a decoder ends with its capture, idle ones within a minute). */
const RETRY_AFTER_SECONDS = 10;

const DecoderRequest = z.strictObject({
  codec: z.enum(['VP8', 'H264', 'OPUS']),
  payloadType: z.number().int().min(96).max(127),
  /** Video only; audio comes out as 16 kHz PCM in 100 ms chunks. */
  framesPerSecond: z.number().int().min(1).max(30).default(5),
  maxSeconds: z.number().int().min(1).max(3600),
  /** Whose capture it serves (the API's owner key): the share is counted per owner. */
  owner: z.string().min(1).max(200),
});

/** How many decoders (each an ffmpeg process decoding one stream) one owner and everyone may run at once. */
export interface DecoderCaps {
  perOwner: number;
  total: number;
}

export interface DecoderLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/**
 * The media decoders of capture sessions (issue 22): the API asks for one, tells Janus to forward the
 * publisher's RTP to its loopback port, and reads the sampled frames from a streamed answer:
 *
 * - `POST /v1/decoders` {codec, payloadType, framesPerSecond, maxSeconds, owner} -> 201 {id, host, port}; 429
 *   when the owner holds its share, 503 when every decoder is taken (both with Retry-After). The share is the
 *   rule of src/gateway/fair-share.ts: `caps.perOwner` each, `caps.total` in all, and the last `perOwner` kept
 *   for owners holding fewer than two (one capture's video and audio). One sidecar serves the whole cluster,
 *   so these counts are the cluster's.
 * - `GET /v1/decoders/:id/frames` -> each frame as a 4-byte big-endian length and a JPEG (for OPUS: 100 ms of
 *   16 kHz mono s16le PCM), until the decoder ends
 * - `DELETE /v1/decoders/:id` -> 204, the ffmpeg process killed
 *
 * A decoder ends when its reader goes away, when deleted, or after maxSeconds.
 */
export function mountDecoderRoutes(
  app: Hono,
  options: { log: DecoderLog; ffmpeg?: string; caps: DecoderCaps },
): { stopAll(): void } {
  const decoders = new Map<string, RtpVideoDecoder>();
  /** The owner of each decoder running, or starting (counted from the request on). */
  const owners = new Map<string, string>();
  const limits = shareLimits(options.caps.perOwner, options.caps.total, 2);
  const held = (owner: string) => [...owners.values()].filter((o) => o === owner).length;

  app.post('/v1/decoders', async (c) => {
    const parsed = DecoderRequest.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      return c.json(
        { error: 'validation', detail: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') },
        400,
      );
    const { owner, ...spec } = parsed.data;
    const refused = judgeShare({ mine: held(owner), total: owners.size }, limits);
    if (refused) {
      const retry = { 'Retry-After': String(RETRY_AFTER_SECONDS) };
      if (refused === 'full')
        return c.json({ error: 'busy', detail: `all ${limits.total} decoders are running` }, 503, retry);
      return c.json({ error: 'owner-share', detail: `the owner holds its share of decoders (${refused})` }, 429, retry);
    }
    const decoder = new RtpVideoDecoder(
      spec,
      (d) => {
        decoders.delete(d.id);
        owners.delete(d.id);
        options.log.info('decoder ended', {
          id: d.id,
          frames: d.framesOut,
          ...(d.framesOut === 0 && d.diagnostics ? { ffmpeg: d.diagnostics } : {}),
        });
      },
      options.ffmpeg,
    );
    owners.set(decoder.id, owner);
    try {
      await decoder.start();
    } catch (error) {
      owners.delete(decoder.id);
      decoder.stop();
      options.log.warn('decoder failed to start', { error: (error as Error).message });
      return c.json({ error: 'unavailable', detail: 'the media decoder could not start' }, 503);
    }
    decoders.set(decoder.id, decoder);
    return c.json({ id: decoder.id, host: '127.0.0.1', port: decoder.port } satisfies DecoderHandle, 201);
  });

  app.get('/v1/decoders/:id/frames', (c) => {
    const decoder = decoders.get(c.req.param('id'));
    if (!decoder) return c.json({ error: 'not-found' }, 404);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const frame = await decoder.next();
        if (!frame) return controller.close();
        const header = new Uint8Array(4);
        new DataView(header.buffer).setUint32(0, frame.length);
        controller.enqueue(header);
        controller.enqueue(new Uint8Array(frame.buffer, frame.byteOffset, frame.length));
      },
      // The reader went away: nobody wants this camera's frames any more.
      cancel: () => decoder.stop(),
    });
    return new Response(body, { headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' } });
  });

  app.delete('/v1/decoders/:id', (c) => {
    decoders.get(c.req.param('id'))?.stop();
    return c.body(null, 204);
  });

  return {
    stopAll: () => {
      for (const d of [...decoders.values()]) d.stop();
    },
  };
}
