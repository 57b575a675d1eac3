import type { JsonText } from '../encoding/json-text.js';
import { JsonAnswer } from './types.js';

/**
 * An answer that is already its JSON text, exactly what its response schema makes of it (the subject reads, whose
 * texts the read model makes once per state of a subject: services/subjects/read-model.ts). It goes out as it is,
 * as the text's bytes made once: no parse by the schema, no stringify, no encoding. With BIMS_CHECK_ANSWERS=on the
 * text is checked against the schema anyway (http/answer-check.ts). `T` types what the text holds, checked against
 * the schema's input by `tsc`.
 */
export class PresentedJson<T> extends JsonAnswer<T> {
  constructor(readonly json: JsonText) {
    super(undefined as T, {});
  }

  /**
   * `data` for whoever reads it as a JsonAnswer, parsed when asked (the HTTP layer sends {@link json} instead). A
   * getter of the class: defined on each instance, as it was, it cost a property definition per subject read.
   */
  override get data(): T {
    return JSON.parse(this.json.text) as T;
  }
}

/** An answer as its JSON text (see {@link PresentedJson}). */
export function presentedJson<T>(json: JsonText): PresentedJson<T> {
  return new PresentedJson<T>(json);
}
