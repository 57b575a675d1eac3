import type { z } from 'zod';
import type { ReextractSubjectRequest } from '../../schemas/subjects.js';
import type { Services } from '../index.js';
import { DomainError } from '../errors.js';
import { reextractFromTemplate } from './from-template.js';
import { reextractStoredSubject } from './stored-subject.js';
import type { Caller } from './refuse.js';

type Request = z.output<typeof ReextractSubjectRequest>;

/**
 * `reextractSubject`: bring templates to the current template version, either a stored subject's (from its
 * stored samples, see {@link reextractStoredSubject}) or a client's old template with new samples that must
 * match it (see {@link reextractFromTemplate}). The schema lets exactly one of `subjectId` and `template`
 * through; voice samples wait for the voice engine.
 */
export async function reextractSubject(services: Services, request: Request, caller: Caller) {
  if (request.voices?.length) {
    throw new DomainError('unprocessable', 'body.voices: voice re-extraction needs the voice engine, which is not built yet (issue 6); give faces for now', {
      errors: [{ field: 'body.voices', message: 'voice re-extraction is not available yet' }],
    });
  }
  if (request.template !== undefined) return reextractFromTemplate(services, { template: request.template, faces: request.faces }, caller);
  return reextractStoredSubject(services, request.subjectId!, caller);
}
