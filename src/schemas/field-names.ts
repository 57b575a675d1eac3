/**
 * How a request names the places of its body in the `field` of an error. The services and the schemas know a
 * place by its path in the JSON body (`['faces', 1, 'image']`); the request that carried it may have named it
 * otherwise (a multipart form sends that photo as the second `image` part), so whoever builds an error asks
 * the request's namer, made by the HTTP layer from how the body came (src/http/multipart.ts, formFieldNames).
 */

/** A place in a request body, as the JSON body has it: `['faces', 1, 'image']`. */
export type BodyPath = readonly (string | number)[];

/** The field an error names for a place of the body: `body.faces.1.image`, or a form's `body.image.1`. */
export type FieldNamer = (path: BodyPath) => string;

/** A JSON body's names: the path itself, dotted, after `body`. */
export const jsonFieldNames: FieldNamer = (path) => ['body', ...path].join('.');

/** The fields of a list of samples (`faces`, each `{ image }`) under one namer. */
export interface SampleFields {
  /** The list itself: `body.faces` (a form: `body.image`). */
  readonly list: string;
  /** One sample: `body.faces.1` (a form: `body.image.1`). */
  sample(index: number): string;
  /** Its bytes: `body.faces.1.image` (a form: `body.image.1`). */
  bytes(index: number): string;
}

/** The fields of the samples at `list`, each holding its bytes at `key`, as `names` calls them. */
export function sampleFields(names: FieldNamer, list: string, key: string): SampleFields {
  return {
    list: names([list]),
    sample: (index) => names([list, index]),
    bytes: (index) => names([list, index, key]),
  };
}
