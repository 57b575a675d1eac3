import { describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { zipStream, type ZipFileInput } from './zip-stream.js';

const at = new Date('2026-11-25T12:00:00Z');
const file = (i: number, size: number): ZipFileInput => ({
  path: `f/${i}.bin`,
  bytes: new Uint8Array(size).fill(i),
  modifiedAt: at,
});

async function readAll(stream: ReadableStream<Uint8Array>) {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

describe('zipStream', () => {
  it('writes an archive that unzips to the same files, in order', async () => {
    const files = [
      file(1, 10),
      file(2, 0),
      file(3, 100_000),
      { path: 'manifest.json', bytes: new TextEncoder().encode('{}'), modifiedAt: new Date(0) },
    ];
    async function* source() {
      yield* files;
    }
    const out = unzipSync(await readAll(zipStream(source())));
    expect(Object.keys(out)).toEqual(files.map((f) => f.path));
    for (const f of files) expect(Buffer.from(out[f.path]!).equals(Buffer.from(f.bytes))).toBe(true);
  });

  it('pulls files from the source only as the reader asks for them', async () => {
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield file(i, 1000);
      }
    }
    const reader = zipStream(source()).getReader();
    await reader.read();
    // One file is written per pull; the stream may run one pull ahead of the reader, never the whole source.
    expect(pulled).toBeLessThanOrEqual(2);
    await reader.cancel();
  });

  it('cancelling stops the source; a failing source errors the stream', async () => {
    let finished = false;
    async function* endless() {
      try {
        for (let i = 0; ; i++) yield file(i, 10);
      } finally {
        finished = true;
      }
    }
    const reader = zipStream(endless()).getReader();
    await reader.read();
    await reader.cancel();
    expect(finished).toBe(true);

    async function* failing() {
      yield file(1, 10);
      throw new Error('row deleted during download');
    }
    await expect(readAll(zipStream(failing()))).rejects.toThrow('row deleted during download');
  });
});
