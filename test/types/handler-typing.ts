import { z } from '../../src/schemas/common.js';
import { defineOperation } from '../../src/operations/types.js';

/**
 * Checked by `tsc` only (nothing imports it; handler-typing.test.ts compiles it): a handler's input is typed from its operation's schemas. Each
 * `@ts-expect-error` fails the typecheck if the error it marks stops being one, i.e. if the inference
 * decays to `any`.
 */
export const typedHandlers = [
  defineOperation({
    id: 'typedQuery', method: 'get', path: '/typed', surfaces: ['admin'], area: 'Typing', summary: 'A query and a body',
    request: { query: z.object({ page: z.coerce.number() }), body: z.object({ name: z.string() }) },
    handle: async ({ query, body, params }) => {
      const page: number = query.page;
      const name: string = body.name;
      // @ts-expect-error a field the query schema does not have
      void query.size;
      // @ts-expect-error the body's field is a string
      const wrong: number = body.name;
      // @ts-expect-error no path parameters were declared
      void params.id;
      return { page, name, wrong };
    },
  }),
  defineOperation({
    id: 'noInput', method: 'get', path: '/none', surfaces: ['admin'], area: 'Typing', summary: 'No input',
    handle: async ({ body }) => {
      // @ts-expect-error no body was declared
      return body.anything;
    },
  }),
];
