import type { z } from 'zod';
import type { InitParams } from '../../schemas/gateway-init.js';
import type { FaceGates } from '../biometrics/face-samples.js';
import type { DedupRules } from '../enrolment/deduplicate.js';

/** What a capture session holds its frames and its operation to instead of the settings. */
export interface SessionSettings {
  /** The frame gates (and the operation's, which judges the selected frames again). */
  gates: Partial<FaceGates>;
  /** VERIFY and IDENTIFY: the operation's own options. */
  matching: { threshold?: number; maxCandidates?: number };
  /** ENROLL: the deduplication rules. */
  deduplication: Partial<DedupRules>;
}

/**
 * The `overrides` of an Advanced session's init params, said as what each part of the operation takes. A key
 * left out keeps the setting's value; the plain kinds (FV, MULTIMODAL) take none. `liveness.mode` PASSIVE
 * demands liveness; NONE drops the demand unless the params' `detectLiveness` keeps it.
 */
export function sessionSettings(params: z.output<typeof InitParams>): SessionSettings {
  const o = 'overrides' in params ? params.overrides : {};
  const defined = <T extends Record<string, unknown>>(value: T): Partial<T> =>
    Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
  const mode = o['liveness.mode'];
  return {
    gates: defined({
      minQuality: o['quality.face.minimum'],
      livenessThreshold: o['liveness.threshold'],
      requireLiveness: mode === undefined ? undefined : mode === 'PASSIVE' || params.detectLiveness,
    }),
    matching: defined({ threshold: o['matching.threshold'], maxCandidates: o['identify.maxCandidates'] }),
    deduplication: defined({
      duplicate: o['deduplication.duplicateThreshold'],
      adjudication: o['deduplication.adjudicationThreshold'],
      maxCandidates: o['identify.maxCandidates'],
    }),
  };
}
