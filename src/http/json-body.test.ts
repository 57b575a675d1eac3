import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../encoding/base64.js';
import { MAX_OTHER_BYTES, readJsonBody } from './json-body.js';

const SAMPLES = [['faces', '*', 'image'], ['voices', '*', 'audio'], ['template']];

/** A request whose body arrives in the given pieces. */
function streamed(pieces: Uint8Array[]): Request {
  const queue = [...pieces];
  return new Request('http://x/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = queue.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    }),
    duplex: 'half',
  } as RequestInit);
}

/** `text` as UTF-8, cut at the given fractions of its length. */
function cut(text: string, at: number[]): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const cuts = [...new Set(at.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    if (c > from) out.push(bytes.subarray(from, c));
    from = Math.max(from, c);
  }
  return out;
}

/** What the body must read as: JSON.parse, with the base64 at the sample paths as bytes. */
function expected(value: { faces?: { image: string }[]; template?: string; [k: string]: unknown }) {
  return {
    ...value,
    ...(value.faces ? { faces: value.faces.map((f) => ({ ...f, image: fromBase64(f.image) })) } : {}),
    ...(value.template !== undefined ? { template: fromBase64(value.template) } : {}),
  };
}

const base64 = fc.uint8Array({ maxLength: 40 }).map(toBase64);

describe('readJsonBody with samples', () => {
  it('hands the base64 at sample paths on as bytes, whatever the chunks, and the rest as JSON.parse reads it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            subjectId: fc.string(),
            faces: fc.array(fc.record({ image: base64 }), { maxLength: 3 }),
            template: base64,
            metadata: fc.jsonValue({ maxDepth: 3 }),
          },
          { requiredKeys: ['subjectId'] },
        ),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
        fc.boolean(),
        async (value, at, escapeSlashes) => {
          let text = JSON.stringify(value, null, at.length % 2 ? 1 : undefined);
          if (escapeSlashes) text = text.replace(/\//g, '\\/'); // as PHP writes JSON
          const body = await readJsonBody(streamed(cut(text, at)), { samples: SAMPLES });
          // The oracle is JSON.parse of the same text (JSON.stringify writes -0 as 0).
          expect(body).toEqual(expected(JSON.parse(text)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads keys written with escapes as the keys they spell; a sample elsewhere stays text', async () => {
    const image = toBase64(new Uint8Array([1, 2, 3, 250]));
    const body = await readJsonBody(
      streamed(cut(`{"fa\\u0063es":[{"image":"${image}"}],"metadata":{"faces":[{"image":"${image}"}]}}`, [0.3])),
      { samples: SAMPLES },
    );
    expect(body).toEqual({
      faces: [{ image: new Uint8Array([1, 2, 3, 250]) }],
      metadata: { faces: [{ image }] },
    });
    // Without sample paths (an operation that takes none) every string stays a string.
    await expect(readJsonBody(streamed(cut(`{"template":"${image}"}`, [0.5])))).resolves.toEqual({ template: image });
  });

  it('refuses a sample that is not base64 naming it, at once', async () => {
    for (const [text, field] of [
      ['{"faces":[{"image":"QUJD"},{"image":"QU JD"}]}', 'body.faces.1.image'],
      ['{"faces":[{"image":"QUJ"}]}', 'body.faces.0.image'],
      ['{"template":"QU\\nJD"}', 'body.template'],
      ['{"voices":[{"audio":"QQ=A"}]}', 'body.voices.0.audio'],
      ['{"voices":[{"audio":"é"}]}', 'body.voices.0.audio'],
    ]) {
      const error = await readJsonBody(streamed(cut(text!, [0.5])), { samples: SAMPLES }).catch((e: unknown) => e);
      expect(error, text).toMatchObject({
        code: 'validation',
        extras: { errors: [{ field, message: 'must be base64 (RFC 4648, padded)' }] },
      });
    }
  });

  it('a duplicate key keeps the last value, as JSON.parse does', async () => {
    const body = await readJsonBody(streamed(cut('{"template":"QUJD","template":5}', [0.4])), { samples: SAMPLES });
    expect(body).toEqual({ template: 5 });
  });

  it(`refuses more than ${MAX_OTHER_BYTES} bytes besides the samples, and malformed JSON as before`, async () => {
    const big = JSON.stringify({ faces: [{ image: 'QUJD' }], metadata: { a: 'x'.repeat(MAX_OTHER_BYTES) } });
    const error = await readJsonBody(streamed(cut(big, [0.1, 0.5])), { samples: SAMPLES }).catch((e: unknown) => e);
    expect(error).toMatchObject({ extras: { errors: [{ field: 'body', message: expect.stringMatching(/besides/) }] } });
    for (const text of ['{"faces":[{"image":"QUJD"}]', '{"faces":[{"image" "QUJD"}]}', '{"faces":[{"image":"QUJD']) {
      const malformed = await readJsonBody(streamed(cut(text, [0.5])), { samples: SAMPLES }).catch((e: unknown) => e);
      expect(malformed, text).toMatchObject({ extras: { errors: [{ field: 'body', message: 'is not valid JSON' }] } });
    }
  });
});
