import { JsonAnswer } from './types.js';

/**
 * An answer that is already its JSON text, exactly what its response schema makes of it (the subject reads, whose
 * texts the read model makes once per state of a subject: services/subjects/read-model.ts). It goes out as it is:
 * no parse by the schema, no stringify. With BIMS_CHECK_ANSWERS=on the text is checked against the schema anyway
 * (http/answer-check.ts). `T` types what the text holds, checked against the schema's input by `tsc`.
 */
export class PresentedJson<T> extends JsonAnswer<T> {
  constructor(readonly text: string) {
    super(undefined as T, {});
    // `data` for whoever reads it as a JsonAnswer (the HTTP layer sends `text` instead).
    Object.defineProperty(this, 'data', { get: () => JSON.parse(text) as T });
  }
}

/** An answer as its JSON text (see {@link PresentedJson}). */
export function presentedJson<T>(text: string): PresentedJson<T> {
  return new PresentedJson<T>(text);
}
