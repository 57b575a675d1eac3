import { pagingQuery, z } from './common.js';
import { Modality, SubjectIdString, TemplateVersion, createdRange, idParam, uuid } from './primitives.js';
import { SubjectStatus } from './subject-status.js';

/**
 * The subjects' list parameters and the delete and clear requests (seed section 4.11); subjects.ts re-exports
 * them with the subject models.
 */

// ---- list parameters ----------------------------------------------------------------------------------

/**
 * Metadata equality as one JSON object in the query string (`metadata={"country":"FR"}`, URL-encoded): a
 * subject matches when its metadata contains every given key with the given value (jsonb containment `@>`,
 * so a nested object or array given here matches when it is contained). Anything but a JSON object is a 400.
 */
const metadataFilter = z
  .string()
  .max(4096, 'must be at most 4096 characters')
  .transform((text, ctx) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object, e.g. {"country":"FR"}' });
      return z.NEVER;
    }
    return value as Record<string, unknown>;
  })
  .optional()
  .openapi({
    type: 'string',
    // JSON Schema 2020-12: the string is JSON text of an object (anything else is a 400 naming the field).
    ...({ contentMediaType: 'application/json', contentSchema: { type: 'object' } } as object),
    maxLength: 4096,
    description: 'JSON object (as JSON text); subjects whose metadata contains these keys with these values',
    example: '{"country":"FR"}',
  });

const subjectFilter = {
  subjectId: SubjectIdString.optional().openapi({
    description: 'Subject identifier prefix (matched literally: % and _ are not wildcards)',
  }),
  status: SubjectStatus.optional(),
  modality: Modality.optional(),
  templateVersion: TemplateVersion.optional(),
  metadata: metadataFilter,
  ...createdRange,
};
/** The filter fields every subject list and count shares (services/subjects/filters.ts applies them). */
export type SubjectFilter = z.output<z.ZodObject<typeof subjectFilter>>;
const subjectSort = ['id', 'subjectId', 'status', 'createdAt', 'updatedAt'] as const;
export const SubjectsQuery = z.strictObject({ ...subjectFilter, ...pagingQuery(subjectSort) });
export const SubjectsCountQuery = z.strictObject(subjectFilter);
export const SubjectIdListQuery = z.strictObject({
  ...subjectFilter,
  ...pagingQuery(['id', 'subjectId', 'createdAt']),
});

export const SubjectIdQuery = z.strictObject({ subjectId: SubjectIdString });
export const SubjectIdLowerParams = z.strictObject({ subjectid: SubjectIdString });

export const DeleteSubjectQuery = z
  .strictObject({
    subjectId: SubjectIdString.optional().openapi({
      description: 'Subject identifier; exactly one of subjectId and id',
    }),
    id: idParam
      .optional()
      .openapi({ description: 'Internal identifier, instead of subjectId; exactly one of subjectId and id' }),
  })
  .refine((v) => (v.subjectId === undefined) !== (v.id === undefined), {
    path: ['subjectId'],
    message: 'give exactly one of subjectId and id',
  });

export const DeleteSubjectsRequest = z.strictObject({ subjectIds: z.array(SubjectIdString).min(1).max(1000) });
export const DeleteSubjectsByUuidRequest = z.strictObject({ uuids: z.array(uuid).min(1).max(1000) });
export const ClearDbQuery = z.strictObject({
  prefix: z
    .string()
    .max(128, 'must be at most 128 characters')
    .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
    .optional()
    .openapi({
      description:
        'Only subjects whose subjectId starts with this (literally); required (non-empty) on the user surface',
    }),
});

/** `clearDb` on the user surface: a non-empty prefix is required there (clearing every subject is for ADMIN surfaces). */
export const UserClearDbQuery = z.strictObject({
  prefix: z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? 'is required on the user surface (clearing every subject needs an ADMIN surface)'
          : undefined,
    })
    .min(1, 'is required on the user surface (clearing every subject needs an ADMIN surface)')
    .max(128, 'must be at most 128 characters')
    .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
    .openapi({
      description:
        'Only subjects whose subjectId starts with this (literally), among those the calling account enrolled',
    }),
});

/** What `clearDb` removed, per table (adjudication decisions go with their cases). */
export const ClearDbResult = z
  .object({
    deleted: z.number().int().min(0).openapi({ description: 'Subjects removed' }),
    removed: z.object({
      subjects: z.number().int().min(0),
      operations: z.number().int().min(0),
      images: z.number().int().min(0),
      faceSamples: z.number().int().min(0),
      voiceSamples: z.number().int().min(0),
      templates: z.number().int().min(0),
      adjudicationCases: z.number().int().min(0),
    }),
  })
  .openapi({ description: 'How many subjects were removed, and the rows removed per table' });
