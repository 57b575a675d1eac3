import qrcode from 'qrcode-generator';
import { encodePng } from '../../biometrics/image/encode.js';

/**
 * QR codes of signed templates, in byte mode, drawn by us: `qrcode-generator` (pure JS) only computes the
 * module matrix, PNG comes from the project's own encoder and SVG is written as text, so this runs on Node,
 * Deno and Workers alike (the `qrcode` package's PNG writer needs Node streams).
 */

/** Error correction M (15% recovery): scannable from a phone screen while a ~650-byte envelope stays <= version 25. */
const QR_ERROR_CORRECTION = 'M' as const;
/** Quiet zone the standard asks for, in modules. */
const MARGIN = 4;
/** Pixels per module of the PNG. */
const QR_PNG_SCALE = 4;

/** The module matrix of a QR code. */
export interface QrMatrix {
  /** QR version 1..40. */
  version: number;
  /** Modules per side (17 + 4 * version). */
  size: number;
  isDark(row: number, col: number): boolean;
}

/**
 * Encode bytes in one byte-mode segment at the smallest version that holds them.
 * @throws Error when the bytes exceed the capacity of version 40 at level M (2331 bytes).
 */
export function qrMatrix(bytes: Uint8Array): QrMatrix {
  const qr = qrcode(0, QR_ERROR_CORRECTION);
  // Byte mode maps each char code to one byte; pin the mapping while adding (it is a module-wide setting).
  const saved = qrcode.stringToBytes;
  qrcode.stringToBytes = (s: string) => Array.from(s, (c) => c.charCodeAt(0) & 0xff);
  try {
    let s = '';
    for (const b of bytes) s += String.fromCharCode(b);
    qr.addData(s, 'Byte');
    qr.make();
  } finally {
    qrcode.stringToBytes = saved;
  }
  const size = qr.getModuleCount();
  return { version: (size - 17) / 4, size, isDark: (r, c) => qr.isDark(r, c) };
}

/** The QR code as a PNG (RGB, black on white, quiet zone included). */
export function qrPng(m: QrMatrix, scale = QR_PNG_SCALE): Uint8Array {
  const side = (m.size + 2 * MARGIN) * scale;
  const data = new Uint8Array(side * side * 3).fill(255);
  for (let r = 0; r < m.size; r++) {
    for (let c = 0; c < m.size; c++) {
      if (!m.isDark(r, c)) continue;
      for (let y = (r + MARGIN) * scale, ye = y + scale; y < ye; y++) {
        data.fill(0, (y * side + (c + MARGIN) * scale) * 3, (y * side + (c + MARGIN + 1) * scale) * 3);
      }
    }
  }
  return encodePng({ width: side, height: side, data });
}

/** The QR code as SVG text: one path of unit squares in a viewBox of modules, scalable without blur. */
export function qrSvg(m: QrMatrix): string {
  const side = m.size + 2 * MARGIN;
  let d = '';
  for (let r = 0; r < m.size; r++) {
    for (let c = 0; c < m.size; c++) if (m.isDark(r, c)) d += `M${c + MARGIN} ${r + MARGIN}h1v1h-1z`;
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" width="${side * QR_PNG_SCALE}" height="${side * QR_PNG_SCALE}" shape-rendering="crispEdges"><rect width="100%" height="100%" fill="#fff"/><path fill="#000" d="${d}"/></svg>\n`;
}
