// What an operation declares about its multipart form: part of the operation table (data), read by the HTTP
// layer's form reader (src/http/multipart.ts), which turns such a form into the operation's JSON body.

/**
 * How an operation takes `multipart/form-data` besides JSON: which parts carry bytes (a photo as
 * `curl -F image=@face.jpg` sends it), which carry JSON text, which are plain text. The form is turned into
 * the operation's JSON body with the files' bytes where the JSON has their base64 (both arrive at the services
 * as `Uint8Array`s), so one schema validates both and the services see one shape. Errors name the form's parts:
 * the form spec maps a place of the JSON body to its part (src/http/multipart.ts, formFieldNames).
 *
 * @example { files: { image: { into: 'faces', key: 'image', many: true, mediaTypes: ['image/jpeg', 'image/png'] } }, text: ['subjectId'] }
 */
export interface FormSpec {
  /** Binary parts by part name. */
  files: Record<string, FilePart>;
  /** Parts holding JSON text (objects such as `metadata` and `options`). */
  json?: readonly string[];
  /** Plain text fields, taken as strings. */
  text?: readonly string[];
}

export interface FilePart {
  /** The body field the bytes go to. */
  into: string;
  /** With `many`: each part becomes `{ [key]: bytes }` in the list at `into` (e.g. faces[i].image). */
  key?: string;
  /** The part may be given more than once (each is one sample). */
  many?: true;
  /** A text field of that name is taken as base64 as it is (an exported template pasted as text). */
  textIsBase64?: true;
  /** What the bytes are, for the document's encoding object. */
  mediaTypes: readonly string[];
  description: string;
}
