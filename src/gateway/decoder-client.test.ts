import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecoderClient } from './decoder-client.js';
import { readPpmFrame } from '../protocols/ppm-frames.js';

/** A 4-byte big-endian length and the frame, as the sidecar's frames route sends each (routes.ts). */
const framed = (frame: Uint8Array) => {
  const out = Buffer.alloc(4 + frame.length);
  out.writeUInt32BE(frame.length, 0);
  out.set(frame, 4);
  return out;
};
const ppm = (width: number, height: number, seed: number) => {
  const header = Buffer.from(`P6\n${width} ${height}\n255\n`);
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7 + seed) & 255;
  return Buffer.concat([header, pixels]);
};

// Two 640x480 frames, a small one and an empty one, written in writes of odd sizes (1, 3, 5 ... bytes, then
// 64 KB), so lengths and frames straddle the chunks the reader gets.
const frames = [ppm(640, 480, 1), ppm(3, 2, 9), Buffer.alloc(0), ppm(640, 480, 5)];
let url = '';
const server = createServer((req, res) => {
  if (req.headers.authorization !== 'Bearer t') return res.writeHead(401).end();
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const stream = Buffer.concat(frames.map(framed));
  let at = 0;
  let size = 1;
  const next = () => {
    if (at >= stream.length) return res.end();
    const n = size < 64 ? size : 65_536;
    size += 2;
    res.write(stream.subarray(at, at + n));
    at += n;
    setImmediate(next);
  };
  next();
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the decoder client's frames", () => {
  it('come whole and in order, whatever chunks they arrive in, each in an array of its own length', async () => {
    const client = new DecoderClient({ url, token: 't', timeoutMs: 5000 });
    const got: Uint8Array[] = [];
    for await (const frame of client.frames('d', new AbortController().signal)) got.push(frame);
    expect(got.map((f) => f.length)).toEqual(frames.map((f) => f.length));
    for (const [i, frame] of got.entries()) {
      expect(Buffer.from(frame).equals(frames[i]!)).toBe(true);
      // One copy: the array is the frame's alone, not a view of the stream's bytes.
      expect(frame.byteOffset === 0 && frame.buffer.byteLength === frame.length).toBe(true);
    }
    const picture = readPpmFrame(got[0]!);
    expect([picture.width, picture.height, picture.data.length]).toEqual([640, 480, 640 * 480 * 3]);
  });
});
