import { decode } from 'fast-png';
import { describe, expect, it } from 'vitest';
import { encodePng } from './encode.js';

describe('encodePng', () => {
  it('writes a PNG any decoder reads back pixel for pixel', () => {
    const width = 37,
      height = 23;
    const data = new Uint8Array(width * height * 3);
    // A gradient with noise: rows differ, values wrap around in the Up filter's differences.
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + ((i * 2654435761) >>> 24)) & 255;
    const png = encodePng({ width, height, data });
    const back = decode(png);
    expect({ width: back.width, height: back.height, channels: back.channels, depth: back.depth }).toEqual({
      width,
      height,
      channels: 3,
      depth: 8,
    });
    expect(Array.from(back.data as Uint8Array)).toEqual(Array.from(data));
  });

  it('encodes a one-pixel image', () => {
    const back = decode(encodePng({ width: 1, height: 1, data: new Uint8Array([1, 2, 3]) }));
    expect(Array.from(back.data as Uint8Array)).toEqual([1, 2, 3]);
  });
});
