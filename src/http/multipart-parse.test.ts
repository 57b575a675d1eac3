import { describe, expect, it } from 'vitest';
import { MAX_PARTS, MultipartError, parseMultipart } from './multipart-parse.js';

const text = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** A body as the platform's own FormData encoder writes it, with its Content-Type. */
async function encoded(form: FormData) {
  const res = new Response(form);
  return { type: res.headers.get('content-type')!, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe('parseMultipart', () => {
  it('reads what FormData writes: files with names and types, text fields, repeated names, bytes that look like delimiters', async () => {
    const tricky = new Uint8Array(70_000);
    for (let i = 0; i < tricky.length; i++) tricky[i] = (i * 2654435761) >>> 24;
    tricky.set(text('\r\n--not-the-boundary\r\n\r\n'), 1000);
    const form = new FormData();
    form.append('subjectId', 'élise 1');
    form.append('image', new Blob([tricky], { type: 'image/png' }), 'a "quoted" name.png');
    form.append('image', new Blob([], { type: 'image/jpeg' }), 'empty.jpg');
    form.append('metadata', '{"a":[1,2]}\r\nsecond line');
    const { type, bytes } = await encoded(form);
    const parts = parseMultipart(bytes, type);
    expect(parts.map((p) => [p.name, p.filename, p.type])).toEqual([
      ['subjectId', undefined, undefined],
      ['image', expect.stringContaining('quoted'), 'image/png'],
      ['image', 'empty.jpg', 'image/jpeg'],
      ['metadata', undefined, undefined],
    ]);
    expect(decode(parts[0]!.data)).toBe('élise 1');
    expect(Buffer.from(parts[1]!.data).equals(Buffer.from(tricky))).toBe(true);
    expect(parts[2]!.data.length).toBe(0);
    expect(decode(parts[3]!.data)).toBe('{"a":[1,2]}\r\nsecond line');
    // The platform's parser reads the same body the same way.
    const reference = await new Request('http://x/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: bytes,
    }).formData();
    expect(
      Buffer.from(await (reference.getAll('image')[0] as Blob).arrayBuffer()).equals(Buffer.from(parts[1]!.data)),
    ).toBe(true);
  });

  it('takes a preamble, transport padding, a quoted boundary and an epilogue (RFC 2046)', () => {
    const body = text(
      'preamble\r\n--B\t \r\nContent-Disposition: form-data; name=type\r\n\r\nVERIFY\r\n--B--\r\nepilogue',
    );
    expect(parseMultipart(body, 'multipart/form-data; boundary="B"').map((p) => [p.name, decode(p.data)])).toEqual([
      ['type', 'VERIFY'],
    ]);
  });

  it('refuses broken bodies with a reason', () => {
    const bad =
      (body: string, type = 'multipart/form-data; boundary=B') =>
      () =>
        parseMultipart(text(body), type);
    expect(bad('--B\r\nContent-Disposition: form-data; name="a"\r\n\r\nno end')).toThrow(/no closing boundary/);
    expect(bad('nothing here')).toThrow(/no boundary delimiter/);
    expect(bad('--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--')).toThrow(/no name/);
    expect(bad('--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--')).toThrow(/Content-Disposition/);
    expect(bad('--B\r\n', 'multipart/form-data')).toThrow(/no boundary/);
    expect(bad('--Bxx\r\n\r\n--B--')).toThrow(MultipartError);
    const many =
      Array.from(
        { length: MAX_PARTS + 1 },
        (_, i) => `--B\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`,
      ).join('') + '--B--';
    expect(bad(many)).toThrow(/more than 64 parts/);
  });
});
