/**
 * Reads the EXIF Orientation tag (0x0112) of a JPEG. Returns 1 (upright) when absent or unreadable:
 * a broken EXIF block must never make an otherwise decodable photo fail.
 */
export function jpegOrientation(bytes: Uint8Array): number {
  let off = 2; // after SOI
  while (off + 4 <= bytes.length) {
    if (bytes[off] !== 0xff) return 1;
    const marker = bytes[off + 1];
    if (marker === 0xd9 || marker === 0xda) return 1; // EOI / start of scan: no more metadata
    const len = (bytes[off + 2] << 8) | bytes[off + 3];
    if (len < 2) return 1;
    if (marker === 0xe1 && off + 4 + len - 2 <= bytes.length) {
      const o = readExifOrientation(bytes, off + 4, len - 2);
      if (o) return o;
    }
    off += 2 + len;
  }
  return 1;
}

function readExifOrientation(b: Uint8Array, start: number, len: number): number | 0 {
  // "Exif\0\0"
  if (len < 14 || b[start] !== 0x45 || b[start + 1] !== 0x78 || b[start + 2] !== 0x69 || b[start + 3] !== 0x66)
    return 0;
  const tiff = start + 6;
  const end = start + len;
  const le = b[tiff] === 0x49 && b[tiff + 1] === 0x49;
  const be = b[tiff] === 0x4d && b[tiff + 1] === 0x4d;
  if (!le && !be) return 0;
  const u16 = (p: number) => (p + 2 > end ? -1 : le ? b[p] | (b[p + 1] << 8) : (b[p] << 8) | b[p + 1]);
  const u32 = (p: number) =>
    p + 4 > end
      ? -1
      : le
        ? (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000
        : ((b[p] << 24) >>> 0) + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
  const ifd = tiff + u32(tiff + 4);
  const count = u16(ifd);
  if (count < 0 || count > 1000) return 0;
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > end) return 0;
    if (u16(entry) === 0x0112) {
      const v = u16(entry + 8);
      return v >= 1 && v <= 8 ? v : 0;
    }
  }
  return 0;
}
