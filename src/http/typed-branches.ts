/**
 * Cross-field rules are stated as `anyOf` (at least one of faces, voices, template) whose branches name only
 * what they require: right for JSON Schema validators, but generated clients (openapi-typescript) make each
 * such branch `unknown`, and the body with it (issue 32: createSubject and createOperation typed as `unknown`,
 * so `type: "VERIFI"` went unnoticed). So every branch of an object's `anyOf`/`oneOf` that lists no properties
 * is given the object's own: `type`, `properties`, `additionalProperties`, and the object's `required` beside
 * its own. What a validator accepts does not change (each branch only repeats the object's constraints);
 * a generator now types each branch as the whole body with one more field required.
 */

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The document with the branches filled in, in place; walks every schema below `node`. */
export function typedBranches<T>(node: T): T {
  if (Array.isArray(node)) {
    for (const item of node) typedBranches(item);
    return node;
  }
  if (!isSchema(node)) return node;
  const schema: Schema = node;
  for (const value of Object.values(schema)) typedBranches(value);
  if (isSchema(schema.properties)) {
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = schema[key];
      if (!Array.isArray(branches)) continue;
      schema[key] = branches.map((branch) =>
        isSchema(branch) && branch.properties === undefined && branch.not === undefined
          ? {
              type: 'object',
              properties: schema.properties,
              ...(schema.additionalProperties !== undefined
                ? { additionalProperties: schema.additionalProperties }
                : {}),
              ...branch,
              required: [
                ...new Set([...((schema.required as string[]) ?? []), ...((branch.required as string[]) ?? [])]),
              ],
            }
          : branch,
      );
    }
  }
  return node;
}
