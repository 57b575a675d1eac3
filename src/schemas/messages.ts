import { z } from 'zod';

/**
 * Validation messages in the interface's own words ("is required", "must be an integer", "must be one of:
 * A, B"), for every check whose schema gives no message of its own: what zod says by default names its own
 * machinery ("expected nonoptional, received undefined", "Invalid input"). A field error reads as the field
 * followed by its message: `body.subjectId is required`.
 */

const KINDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  date: 'a date',
  null: 'null',
  nonoptional: 'given',
};

const FORMATS: Record<string, string> = {
  uuid: 'a UUID',
  guid: 'a UUID',
  email: 'an email address',
  url: 'a URL',
  datetime: 'an ISO 8601 date-time',
  date: 'an ISO 8601 date',
  base64: 'base64 (RFC 4648, padded)',
  base64url: 'base64url',
  regex: 'in the expected form',
};

const listed = (values: readonly unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));

/** Our message for a zod issue, or undefined to keep zod's (none of the issue kinds we know). */
export function messageOf(issue: z.core.$ZodRawIssue): string | undefined {
  // Whatever was expected of a field that is absent (a type, one of some values, one of some forms).
  if (issue.input === undefined && issue.code !== 'custom') return 'is required';
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${KINDS[issue.expected] ?? issue.expected}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${listed(issue.values)[0]}`
        : `must be one of: ${listed(issue.values).join(', ')}`;
    case 'too_small': {
      const n = Number(issue.minimum);
      if (issue.origin === 'string') return n === 1 ? 'must not be empty' : `must be at least ${n} characters`;
      if (issue.origin === 'array' || issue.origin === 'set')
        return `must have at least ${n} item${n === 1 ? '' : 's'}`;
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${n}`;
    }
    case 'too_big': {
      const n = Number(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${n} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${n} item${n === 1 ? '' : 's'}`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${n}`;
    }
    case 'invalid_format':
      return `must be ${FORMATS[issue.format] ?? `in ${issue.format} format`}`;
    case 'not_multiple_of':
      return `must be a multiple of ${Number(issue.divisor)}`;
    case 'invalid_union':
      return 'does not match any of the accepted forms';
    case 'invalid_key':
      return 'has a key that is not accepted';
    case 'invalid_element':
      return 'has a value that is not accepted';
    default:
      return undefined;
  }
}

z.config({ customError: (issue) => messageOf(issue) });
