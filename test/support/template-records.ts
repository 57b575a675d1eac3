// What tests read out of a parsed template that the service never needs to (it matches on the int8 vectors).
import type { Template, TemplateRecord } from '../../src/biometrics/template.js';

/** Float embedding back from int8. */
export function dequantize(r: { q: Int8Array; scale: number }): Float32Array {
  const out = new Float32Array(r.q.length);
  for (let i = 0; i < r.q.length; i++) out[i] = r.q[i] * r.scale;
  return out;
}

/** The voice record of a template, or undefined. */
export function voiceRecord(t: Template): TemplateRecord | undefined {
  return t.records.find((r) => r.modality === 'voice');
}
