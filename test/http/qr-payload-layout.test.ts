// The QR payload is what docs/qr-code.md says, byte for byte, and zbarimg reads it only with -Sbinary
// (issue 20): a subject enrolled from a real photo, its PNG code scanned by the real zbarimg.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';

const run = promisify(execFile);

afterAll(async () => {
  await closeSharedExtractor();
});

describe('the QR payload layout (docs/qr-code.md)', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let dir: string;
  beforeAll(async () => {
    // npm test installs it before the suites (scripts/test.mjs); a file run on its own installs it here.
    await run('bash', [join(import.meta.dirname, '../../scripts/ensure-zbar.sh')]);
    booted = await bootForTest('pglite', {}, { createExtractor: sharedExtractorFactory() });
    dir = mkdtempSync(join(tmpdir(), 'bims-qr-'));
  }, 300_000);
  afterAll(async () => {
    await booted?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the scanned bytes are the signed envelope of the documented layout; zbarimg needs -Sbinary', async () => {
    const subjectId = 'alice';
    const enrolled = await booted.app.request('/admin/subjects/create', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({
        subjectId,
        faces: [{ image: Buffer.from(photo('labelled/franck/franck_01829.jpg')).toString('base64') }],
      }),
    });
    expect(enrolled.status).toBe(201);
    const { templateVersion } = await enrolled.json();
    const json = await (
      await booted.app.request(`/subjects/qrcode/${subjectId}`, {
        headers: { authorization: adminAuth, accept: 'application/json' },
      })
    ).json();
    expect(json.payloadType).toBe('SIGNED_TEMPLATE');
    const payload = Buffer.from(json.payload, 'base64');
    const png = Buffer.from(
      await (
        await booted.app.request(`/subjects/qrcode/${subjectId}`, { headers: { authorization: adminAuth } })
      ).arrayBuffer(),
    );
    const file = join(dir, 'alice.png');
    writeFileSync(file, png);

    // The real scanner, as the document tells: --raw -Sbinary gives exactly the payload's bytes.
    const binary = await run('zbarimg', ['--quiet', '--raw', '-Sbinary', file], { encoding: 'buffer' });
    const scanned = binary.stdout as Buffer;
    // (The code is signed anew, with a new issue time, for each request: compare all but the issue time
    // at bytes 10..13 and the signature over it, the last 64 bytes.)
    const unsigned = (x: Buffer) => Buffer.concat([x.subarray(0, 10), x.subarray(14, x.length - 64)]);
    expect(scanned.length).toBe(payload.length);
    expect(unsigned(scanned).equals(unsigned(payload))).toBe(true);
    // Without -Sbinary the bytes come back re-encoded as text: longer, and not the envelope.
    const text = (await run('zbarimg', ['--quiet', '--raw', file], { encoding: 'buffer' })).stdout as Buffer;
    expect(text.length).toBeGreaterThan(scanned.length);
    expect(text.subarray(0, 4).toString('latin1')).toBe('BIMS');
    expect(text.includes(scanned.subarray(scanned.length - 64))).toBe(false);

    // The documented layout, read field by field.
    const b = scanned;
    expect(b.subarray(0, 4).toString('latin1')).toBe('BIMS');
    expect(b[4]).toBe(1);
    expect(b[5]).toBe(1);
    const issuedAt = b.readUInt32LE(10);
    expect(Math.abs(issuedAt - Date.now() / 1000)).toBeLessThan(600);
    const S = b.readUInt16LE(14);
    expect(b.subarray(16, 16 + S).toString('utf8')).toBe(subjectId);
    const T = b.readUInt16LE(16 + S);
    expect(T).toBe(558);
    const t = b.subarray(18 + S, 18 + S + T);
    expect(t.subarray(0, 4).toString('latin1')).toBe('BIMT');
    expect(t[4]).toBe(1);
    const L = t[5]!;
    expect(t.subarray(6, 6 + L).toString('utf8')).toBe(templateVersion);
    expect(t[6 + L]).toBe(1); // one record
    expect(t[7 + L]).toBe(1); // modality: face
    expect(t.readUInt16LE(9 + L)).toBe(512);
    expect(b.length).toBe(82 + S + T);
    expect(b.length).toBe(645);
    // The signature covers every byte before it: the service's own check of the scanned bytes says valid.
    const checked = await booted.app.request('/subjects/qrcode/modalities', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ template: scanned.toString('base64') }),
    });
    expect(await checked.json()).toMatchObject({
      subjectId,
      signed: true,
      signatureValid: true,
      modalities: ['FACE'],
      templateVersion,
    });
    // One flipped bit in the signed bytes and it no longer verifies.
    const flipped = Buffer.from(scanned);
    flipped[16] ^= 1;
    const forged = await booted.app.request('/subjects/qrcode/modalities', {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ template: flipped.toString('base64') }),
    });
    expect(await forged.json()).toMatchObject({ signatureValid: false });
  }, 120_000);
});
