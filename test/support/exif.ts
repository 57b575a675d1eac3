// EXIF for tests: the service reads orientation (src/biometrics/image/exif.ts) but never writes it.

/**
 * Builds an APP1 EXIF segment holding only an Orientation tag: tests put it in a JPEG to make a rotated photo.
 */
export function exifOrientationSegment(orientation: number): Uint8Array {
  const seg = new Uint8Array(2 + 2 + 6 + 8 + 2 + 12 + 4);
  const dv = new DataView(seg.buffer);
  dv.setUint16(0, 0xffe1);
  dv.setUint16(2, seg.length - 2);
  seg.set([0x45, 0x78, 0x69, 0x66, 0, 0], 4);
  const t = 10;
  seg.set([0x4d, 0x4d, 0x00, 0x2a], t); // big endian TIFF
  dv.setUint32(t + 4, 8);
  dv.setUint16(t + 8, 1); // one entry
  dv.setUint16(t + 10, 0x0112);
  dv.setUint16(t + 12, 3); // SHORT
  dv.setUint32(t + 14, 1);
  dv.setUint16(t + 18, orientation);
  dv.setUint32(t + 22, 0); // no next IFD
  return seg;
}
