import { z } from '../schemas/common.js';
import {
  DbClusterStatus,
  DefaultProperty,
  ManagementInfo,
  ResetSettingsResult,
  SetSettingRequest,
  SettingKeyQuery,
  SettingModel,
  SettingPrefixQuery,
  TruncateResult,
} from '../schemas/management.js';
import { clusterStatus } from '../services/management/cluster.js';
import { managementInfo } from '../services/management/info.js';
import { userManagementInfo } from './user-management-info.js';
import { truncateDatabase } from '../services/management/truncate.js';
import { defaultProperties } from '../services/settings/defaults.js';
import { defineOperation } from './types.js';

const area = 'Management';
// On the root surface (no prefix) requiredRole() demands ADMIN: settings and clearing the database are for
// administrators only.
const adminAndRoot = ['admin', 'root'] as const;
const everywhere = ['admin', 'root', 'user'] as const;

/** Seed section 4.9 without login and the token endpoint (those are platform routes): settings, info, cluster, clearing. */
export const managementOperations = [
  defineOperation({
    id: 'getManagementInfo',
    method: 'get',
    path: '/management/info',
    surfaces: everywhere,
    area,
    summary: 'Information and vital parameters of management',
    description:
      'On the user surface only the version, template version, uptime and the worker pool and licence states: no host, runtime, database or counts.',
    response: {
      description: 'Version, uptime, database, counts, worker pool and licence state',
      schema: ManagementInfo,
    },
    handle: async ({ services, surface }) =>
      surface === 'user' ? userManagementInfo(await managementInfo(services)) : managementInfo(services),
  }),
  defineOperation({
    id: 'getAdjudicatorManagementInfo',
    method: 'get',
    path: '/management/info',
    surfaces: ['root'],
    rootPrefix: '/adjudicator',
    area,
    summary: 'Information and vital parameters of management',
    description: 'The same information as getManagementInfo, for adjudicator consoles.',
    response: {
      description: 'Version, uptime, database, counts, worker pool and licence state',
      schema: ManagementInfo,
    },
    handle: ({ services }) => managementInfo(services),
  }),
  defineOperation({
    id: 'getDefaultProperties',
    method: 'get',
    path: '/management/default-properties',
    surfaces: everywhere,
    area,
    summary: 'Default properties of biometric operations',
    response: {
      description: 'Every biometric operation property with its default, type and range',
      schema: z.array(DefaultProperty),
    },
    handle: async () => defaultProperties(),
  }),
  defineOperation({
    id: 'getClusterStatus',
    method: 'get',
    path: '/management/cluster/status',
    surfaces: adminAndRoot,
    area,
    summary: 'Cluster status',
    response: { description: 'Database role, replication, connections and service nodes', schema: DbClusterStatus },
    handle: ({ services }) => clusterStatus(services.ctx),
  }),
  defineOperation({
    id: 'getSettings',
    method: 'get',
    path: '/management/settings',
    surfaces: adminAndRoot,
    area,
    summary: 'All saved settings',
    description: 'Every known key with its effective value, default, type, range and whether it is overridden.',
    response: { description: 'Every setting, sorted by key', schema: z.array(SettingModel) },
    handle: ({ services }) => services.settings.list(),
  }),
  defineOperation({
    id: 'getSettingsByKey',
    method: 'get',
    path: '/management/settings/key',
    surfaces: adminAndRoot,
    area,
    summary: 'All settings whose key starts with a prefix',
    request: { query: SettingPrefixQuery },
    response: { description: 'The matching settings (possibly none)', schema: z.array(SettingModel) },
    handle: ({ services, query }) => services.settings.search(query.key),
  }),
  defineOperation({
    id: 'getSetting',
    method: 'get',
    path: '/management/setting',
    surfaces: adminAndRoot,
    area,
    summary: 'One setting matching a key',
    request: { query: SettingKeyQuery },
    response: { description: 'The setting; 404 for a key the service does not know', schema: SettingModel },
    handle: ({ services, query }) => services.settings.describe(query.key),
  }),
  defineOperation({
    id: 'deleteSetting',
    method: 'delete',
    path: '/management/setting',
    surfaces: adminAndRoot,
    area,
    summary: 'Deletes the setting matching a key',
    description:
      'Removes the override, so the default applies again; deleting a key that is not overridden changes nothing.',
    request: { query: SettingKeyQuery },
    response: { description: 'The setting, now at its default', schema: SettingModel },
    handle: ({ services, query }) => services.settings.delete(query.key),
  }),
  defineOperation({
    id: 'setSetting',
    method: 'post',
    path: '/management/settings',
    surfaces: adminAndRoot,
    area,
    summary: 'Saves or deletes the setting with a given key',
    description:
      "The value must be of the key's type and within its range (400 naming the key otherwise); null restores the default. " +
      'Keys that must stay ordered (deduplication.adjudicationThreshold <= deduplication.duplicateThreshold, checks.face.minBrightness <= checks.face.maxBrightness) are checked against the value stored now and written in one transaction under a database lock, with deleteSetting and resetSettings: of two concurrent writes that are valid alone but not together, on any node, the second is refused (400).',
    request: { body: SetSettingRequest },
    response: { description: 'The setting as it now is', schema: SettingModel },
    handle: ({ services, body }) => services.settings.set(body.key, body.value),
  }),
  defineOperation({
    id: 'resetSettings',
    method: 'post',
    path: '/management/settings/reset',
    surfaces: adminAndRoot,
    area,
    summary: 'Resets all settings to defaults',
    response: { description: 'How many overrides were removed, and the settings now', schema: ResetSettingsResult },
    handle: ({ services }) => services.settings.reset(),
  }),
  defineOperation({
    id: 'truncateDatabase',
    method: 'delete',
    path: '/management/database/clear-db',
    surfaces: adminAndRoot,
    area,
    summary: 'Clears the whole database except the schema version record and the settings',
    description:
      'Accounts, OAuth clients and tokens, signing keys, licences and usage stay, so nobody is locked out. One transaction.',
    response: { description: 'Rows removed per table', schema: TruncateResult },
    handle: ({ services }) => truncateDatabase(services),
  }),
];
