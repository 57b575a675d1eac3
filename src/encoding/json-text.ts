const encoder = new TextEncoder();

/**
 * A JSON answer made once and sent many times (the subject reads: services/subjects/read-model.ts): its text, and
 * its UTF-8 bytes, encoded the first time they are sent and kept. Sent as a string, each answer was measured for
 * its Content-Length (`Buffer.byteLength` walks the text), joined to the head and encoded to UTF-8 again by the
 * socket write; sent as the same bytes, the runtime copies them out as they are. Never changed once made, so one
 * instance may answer any number of requests at once.
 *
 * @example
 * const page = new JsonText('[{"id":1}]');
 * page.bytes; // Uint8Array of the text's UTF-8, the same array on every use
 */
export class JsonText {
  #bytes: Uint8Array<ArrayBuffer> | undefined;

  constructor(readonly text: string) {}

  get bytes(): Uint8Array<ArrayBuffer> {
    return (this.#bytes ??= encoder.encode(this.text));
  }
}
