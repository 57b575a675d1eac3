// The extraction service's HTTP interface (served by `bims extraction-service`, src/runtime/node-extraction.ts):
// a Node process runs the models on its worker pool for callers that should not, such as Cloudflare Workers
// (128 MB per isolate, CPU billed per request). Runtime-neutral: a Hono app around any Extractor.
//   GET  /extractor   template versions and load
//   POST /face        body: the image bytes; header x-bims-extract-options: JSON options -> encoded ImageAnalysis
//   POST /voice       body: the WAV bytes; same header                                  -> encoded VoiceAnalysis
// Every call needs `Authorization: Bearer <BIMS_EXTRACTION_TOKEN>`. Extraction errors answer
// { error: { code, message } } with the status the API would use, so the caller rethrows the same error.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { safeEqual } from '../auth/safe-equal.js';
import { BiometricError, isClientError, type BiometricErrorCode } from '../biometrics/errors.js';
import type { Extractor, TokenImageOptions } from './extractor.js';
import { encodeValue } from './remote-codec.js';

export const EXTRACT_OPTIONS_HEADER = 'x-bims-extract-options';

function statusOf(code: BiometricErrorCode): 422 | 429 | 503 | 504 | 500 {
  if (isClientError(code)) return 422;
  if (code === 'CALLER_QUEUE_FULL') return 429;
  // EXTRACTION_CANCELLED: the caller has hung up and reads no answer.
  if (
    code === 'MODEL_UNAVAILABLE' ||
    code === 'EXTRACTION_CANCELLED' ||
    code === 'EXTRACTOR_BUSY' ||
    code === 'EXTRACTOR_CLOSED'
  )
    return 503;
  return code === 'EXTRACTION_TIMEOUT' ? 504 : 500;
}

/** The service's app around `extractor`, refusing callers without `token`. */
export function createExtractionService(extractor: Extractor, options: { token: string; maxBodyBytes?: number }) {
  const app = new Hono();
  const expected = `Bearer ${options.token}`;
  app.use('*', async (c, next) => {
    if (!safeEqual(c.req.header('authorization') ?? '', expected)) {
      return c.json(
        { error: { code: 'UNAUTHORIZED', message: 'a valid Bearer token (BIMS_EXTRACTION_TOKEN) is required' } },
        401,
      );
    }
    await next();
  });
  app.use('*', bodyLimit({ maxSize: options.maxBodyBytes ?? 32 * 1024 * 1024 }));

  app.get('/extractor', (c) =>
    c.json({
      templateVersion: extractor.templateVersion,
      voiceTemplateVersion: extractor.voiceTemplateVersion,
      stats: extractor.stats(),
    }),
  );

  const analyse =
    (run: (bytes: Uint8Array, opts: Record<string, unknown>) => Promise<unknown>) =>
    async (c: import('hono').Context) => {
      let opts: Record<string, unknown>;
      try {
        opts = JSON.parse(c.req.header(EXTRACT_OPTIONS_HEADER) ?? '{}');
      } catch {
        return c.json({ error: { code: 'BAD_OPTIONS', message: `${EXTRACT_OPTIONS_HEADER} is not JSON` } }, 400);
      }
      // A caller that hangs up (its own client left) drops the job if it has not started.
      opts.signal = c.req.raw.signal;
      try {
        return c.json(encodeValue(await run(new Uint8Array(await c.req.arrayBuffer()), opts)));
      } catch (error) {
        if (!BiometricError.is(error)) throw error;
        return c.json({ error: { code: error.code, message: error.message } }, statusOf(error.code));
      }
    };
  app.post(
    '/face',
    analyse((bytes, opts) => extractor.analyseFace(bytes, opts)),
  );
  app.post(
    '/voice',
    analyse((bytes, opts) => extractor.analyseVoice(bytes, opts)),
  );
  app.post(
    '/token',
    analyse((bytes, opts) => extractor.renderTokenImage(bytes, opts as unknown as TokenImageOptions)),
  );
  return app;
}
