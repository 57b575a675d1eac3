import type { Migration } from 'kysely';
import * as initial from './2026_11_25_0001_initial.js';
import * as sampleTemplates from './2026_11_25_0002_sample_templates.js';
import * as templateKeys from './2026_11_25_0003_template_keys.js';
import * as galleryChanges from './2026_11_25_0004_gallery_changes.js';
import * as lazyTokenImages from './2026_11_26_0005_lazy_token_images.js';
import * as loginThrottle from './2026_11_26_0006_login_throttle_and_credential_version.js';
import * as enrolOperationsFollowCases from './2026_11_26_0007_enrol_operations_follow_cases.js';
import * as greyPaddedTokenImages from './2026_11_26_0008_grey_padded_token_images.js';
import * as captureSessions from './2026_11_26_0009_capture_sessions.js';
import * as subjectRevisions from './2026_11_26_0010_subject_revisions.js';
import * as subjectStateFunction from './2026_11_27_0011_subject_state_function.js';
import * as subjectShardSlot from './2026_11_28_0012_subject_shard_slot.js';
import * as gatewaySessions from './2026_11_28_0013_gateway_sessions.js';
import * as revokedAccessTokens from './2026_11_28_0014_revoked_access_tokens.js';

/**
 * Every migration, listed statically (Workers have no filesystem to scan). Names sort by time; append new
 * ones at the end and never edit one that has shipped.
 */
export const migrations: Record<string, Migration> = {
  '2026_11_25_0001_initial': initial,
  '2026_11_25_0002_sample_templates': sampleTemplates,
  '2026_11_25_0003_template_keys': templateKeys,
  '2026_11_25_0004_gallery_changes': galleryChanges,
  '2026_11_26_0005_lazy_token_images': lazyTokenImages,
  '2026_11_26_0006_login_throttle_and_credential_version': loginThrottle,
  '2026_11_26_0007_enrol_operations_follow_cases': enrolOperationsFollowCases,
  '2026_11_26_0008_grey_padded_token_images': greyPaddedTokenImages,
  '2026_11_26_0009_capture_sessions': captureSessions,
  '2026_11_26_0010_subject_revisions': subjectRevisions,
  '2026_11_27_0011_subject_state_function': subjectStateFunction,
  '2026_11_28_0012_subject_shard_slot': subjectShardSlot,
  '2026_11_28_0013_gateway_sessions': gatewaySessions,
  '2026_11_28_0014_revoked_access_tokens': revokedAccessTokens,
};
