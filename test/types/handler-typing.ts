import { z } from '../../src/schemas/common.js';
import { binary } from '../../src/schemas/common.js';
import { defineOperation, emptyAnswer, jsonAnswer, mediaAnswer } from '../../src/operations/types.js';

/**
 * Checked by `tsc` only (nothing imports it; handler-typing.test.ts compiles it): a handler's input and answer are typed from its operation's schemas. Each
 * `@ts-expect-error` fails the typecheck if the error it marks stops being one, i.e. if the inference
 * decays to `any`.
 */
export const typedHandlers = [
  defineOperation({
    id: 'typedQuery',
    method: 'get',
    path: '/typed',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'A query and a body',
    request: { query: z.object({ page: z.coerce.number() }), body: z.object({ name: z.string() }) },
    response: { description: 'The page and name', schema: z.object({ page: z.number(), name: z.string() }) },
    handle: async ({ query, body, params }) => {
      const page: number = query.page;
      const name: string = body.name;
      // @ts-expect-error a field the query schema does not have
      void query.size;
      // @ts-expect-error the body's field is a string
      const wrong: number = body.name;
      // @ts-expect-error no path parameters were declared
      void params.id;
      void wrong;
      return { page, name };
    },
  }),
  defineOperation({
    id: 'wrongAnswerField',
    method: 'get',
    path: '/answer',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'An answer naming a field its schema lacks',
    response: { description: 'A count', schema: z.object({ count: z.number() }) },
    // @ts-expect-error `total` is not the response schema's field
    handle: async () => ({ total: 1 }),
  }),
  defineOperation({
    id: 'wrongAnswerType',
    method: 'get',
    path: '/answer-type',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'An answer of the wrong type',
    response: { description: 'A count', schema: z.object({ count: z.number() }) },
    // @ts-expect-error the count is a number
    handle: async () => jsonAnswer({ count: 'one' }, {}),
  }),
  defineOperation({
    id: 'mediaTypes',
    method: 'get',
    path: '/media',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'PNG or JSON',
    response: { description: 'An image', schema: z.object({ image: z.string() }), content: { 'image/png': binary } },
    handle: async ({ request }) =>
      request.headers.get('accept') === 'application/json' ? { image: '' } : mediaAnswer('image/png', new Uint8Array()),
  }),
  defineOperation({
    id: 'undeclaredMedia',
    method: 'get',
    path: '/svg',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'A media type the entry does not declare',
    response: { description: 'An image', content: { 'image/png': binary } },
    // @ts-expect-error SVG is not among the declared media types
    handle: async () => mediaAnswer('image/svg+xml', '<svg/>'),
  }),
  defineOperation({
    id: 'emptyStatus',
    method: 'get',
    path: '/empty',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'Data or nothing',
    response: { description: 'A count', schema: z.object({ count: z.number() }) },
    emptyResponses: { 204: 'Nothing to count' },
    handle: async ({ request }) => (request.headers.has('x') ? { count: 1 } : emptyAnswer(204)),
  }),
  defineOperation({
    id: 'undeclaredEmpty',
    method: 'get',
    path: '/empty-undeclared',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'An empty answer the entry does not declare',
    response: { description: 'A count', schema: z.object({ count: z.number() }) },
    // @ts-expect-error 204 is not among the entry's empty answers
    handle: async () => emptyAnswer(204),
  }),
  defineOperation({
    id: 'noInput',
    method: 'get',
    path: '/none',
    surfaces: ['admin'],
    area: 'Typing',
    summary: 'No input',
    handle: async ({ body }) => {
      // @ts-expect-error no body was declared
      void body.anything;
    },
  }),
];
