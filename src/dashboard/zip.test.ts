import { describe, expect, it } from 'vitest';
import { zipSync } from 'fflate';
import { zipStream } from '../services/biometric-data/zip-stream.js';

/**
 * The page's ZIP reader (public/js/zip.js, plain browser JavaScript) run in Node, which has the same web
 * APIs (DataView, Blob, DecompressionStream): archives as the API writes them, and deflated ones.
 */
type Unzip = (buffer: ArrayBuffer) => Promise<{ name: string; bytes: Uint8Array }[]>;
const reader = './public/js/zip.js';
const { unzip } = (await import(reader)) as { unzip: Unzip };

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251);
const buffer = (u: Uint8Array) => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;

describe('the dashboard ZIP reader', () => {
  it('reads what the API download writer streams (stored entries)', async () => {
    const files = [
      { path: 'manifest.json', bytes: new TextEncoder().encode('{"entries":[]}'), modifiedAt: new Date() },
      { path: 'subjects/alice/token-1.png', bytes: bytes(70_000, 1), modifiedAt: new Date() },
      { path: 'subjects/zoé/original-2.jpg', bytes: bytes(3, 2), modifiedAt: new Date() },
    ];
    async function* source() {
      yield* files;
    }
    const zip = new Uint8Array(await new Response(zipStream(source())).arrayBuffer());
    const read = await unzip(buffer(zip));
    expect(read.map((f) => f.name)).toEqual(files.map((f) => f.path));
    for (const [i, f] of read.entries()) expect(Buffer.from(f.bytes).equals(Buffer.from(files[i]!.bytes))).toBe(true);
  });

  it('inflates deflated entries, and refuses what is not a ZIP', async () => {
    const text = new TextEncoder().encode('a face, a face, a face, '.repeat(1000));
    const zip = zipSync({ 'a.txt': [text, { level: 9 }], 'b.bin': [bytes(500, 3), { level: 0 }] });
    const read = await unzip(buffer(zip));
    expect(read.map((f) => [f.name, f.bytes.length])).toEqual([
      ['a.txt', text.length],
      ['b.bin', 500],
    ]);
    expect(Buffer.from(read[0]!.bytes).equals(Buffer.from(text))).toBe(true);
    await expect(unzip(buffer(new TextEncoder().encode('<html>not a zip</html>')))).rejects.toThrow(/not a ZIP/);
  });
});
