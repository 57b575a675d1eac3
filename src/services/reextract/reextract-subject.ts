import type { z } from 'zod';
import type { ReextractSubjectRequest } from '../../schemas/subjects.js';
import { DomainError } from '../errors.js';
import { reextractFromTemplate } from './from-template.js';
import { reextractStoredSubject } from './stored-subject.js';
import type { Caller } from './refuse.js';
import { ownerOf } from '../ownership.js';
import { findSubject } from '../subjects/lookup.js';
import type { ServiceContext } from '../context.js';
import type { SettingsService } from '../settings/settings.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { GalleryService } from '../gallery/gallery-service.js';

type Request = z.output<typeof ReextractSubjectRequest>;

/**
 * `reextractSubject`: bring templates to the current template version, either a stored subject's (from its
 * stored samples, see {@link reextractStoredSubject}) or a client's old template with new samples that must
 * match it (see {@link reextractFromTemplate}). The schema lets exactly one of `subjectId` and `template`
 * through. A stored subject's voice samples are re-extracted with its faces; the template mode proves
 * ownership with faces only (templates carry a face record; voice alone at the default threshold accepts
 * under half of genuine attempts, docs/voice.md), so new voices there are refused naming the field.
 */
export async function reextractSubject(
  services: { ctx: ServiceContext; settings: SettingsService; extractors: ExtractorProvider; gallery: GalleryService },
  request: Request,
  caller: Caller,
) {
  if (request.voices?.length) {
    throw new DomainError(
      'unprocessable',
      "body.voices: an old template is re-extracted from new face samples only; a stored subject's voice samples are re-extracted with reextractSubject and its subjectId",
      {
        errors: [{ field: 'body.voices', message: 'new voice samples are not taken with a template; give faces' }],
      },
    );
  }
  if (request.template !== undefined)
    return reextractFromTemplate(services, { template: request.template, faces: request.faces }, caller);
  // A stored subject is acted on, and answered in full, only for a caller who may read it: on the user
  // surface, the account that enrolled it (services/ownership.ts); another's is a 404 as if absent.
  const owner = ownerOf(caller);
  if (owner) await findSubject(services.ctx.db, { subjectId: request.subjectId! }, owner);
  return reextractStoredSubject(services, request.subjectId!, caller);
}
