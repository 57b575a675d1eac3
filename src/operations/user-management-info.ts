import type { managementInfo } from '../services/management/info.js';

type Info = Awaited<ReturnType<typeof managementInfo>>;

/**
 * `getManagementInfo` as the user surface shows it: what an end-user application needs to know about the
 * service (its version, the template version it makes, how long it has been up, whether extraction and the
 * licence are usable), and nothing about the host it runs on: no host name, runtime, node id, database
 * engine or version, no counts of accounts, subjects, operations or exceptions, no gallery state, and the
 * worker pool and licence by their state only (a licence's message may name internal components).
 */
export function userManagementInfo(info: Info) {
  return {
    version: info.version,
    templateVersion: info.templateVersion,
    startedAt: info.startedAt,
    uptimeSeconds: info.uptimeSeconds,
    workerPool: { state: info.workerPool.state },
    licence: { state: info.licence.state, ...(info.licence.expiresAt ? { expiresAt: info.licence.expiresAt } : {}) },
  };
}
