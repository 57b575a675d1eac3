import { BiometricError } from '../../biometrics/errors.js';
import { faceRecord, parseTemplate } from '../../biometrics/template.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import { DomainError } from '../errors.js';

/**
 * An exported face template given to an enrolment (`body.template`, base64) as its bytes, once it is known to
 * hold a face record of the current template version: else a 400 (unreadable) or 422 (another version, to be
 * re-extracted first) naming the field.
 */
export async function importedFaceTemplate(
  services: { extractors: ExtractorProvider },
  bytes: Uint8Array,
): Promise<Uint8Array> {
  let version: string;
  try {
    const parsed = parseTemplate(bytes);
    if (!faceRecord(parsed)) throw new BiometricError('INVALID_TEMPLATE', 'the template has no face record');
    version = parsed.templateVersion;
  } catch (error) {
    const message = error instanceof Error ? error.message : 'unreadable template';
    throw new DomainError('validation', `body.template: ${message}`, {
      errors: [{ field: 'body.template', message }],
    });
  }
  const current = (await services.extractors.get()).templateVersion;
  if (version !== current) {
    throw new DomainError(
      'unprocessable',
      `body.template: template version ${version} differs from the current ${current}; re-extract it first`,
      {
        errors: [{ field: 'body.template', message: 'template version differs from the current one' }],
      },
    );
  }
  return bytes;
}
