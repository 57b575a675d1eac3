import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import type { LicenceDocument } from '../../src/licensing/document.js';
import { generateLicenceKeys, issueLicence } from '../../src/licensing/issue.js';
import { createLogger } from '../../src/logger.js';
import { startSidecar, type RunningSidecar } from '../../src/sidecar/start.js';

export type VendorKeys = Awaited<ReturnType<typeof generateLicenceKeys>>;

/** The vendor's key pair for one suite, and the configuration that makes the service trust it. */
export async function vendor(): Promise<VendorKeys & { env: Record<string, string> }> {
  const keys = await generateLicenceKeys();
  return { ...keys, env: { BIMS_LICENCE_PUBLIC_KEY: JSON.stringify(keys.publicJwk) } };
}

const DAY = 86_400_000;

/** A licence valid from yesterday for 30 days unless `over` says otherwise. */
export function licence(keys: VendorKeys, over: Partial<LicenceDocument> = {}): Promise<string> {
  return issueLicence(
    {
      licenceId: `LIC-${randomBytes(4).toString('hex').toUpperCase()}`,
      licensee: 'Acme Test',
      source: 'INTERNET',
      modalities: ['FACE'],
      quotas: {},
      notBefore: new Date(Date.now() - DAY).toISOString(),
      expiresAt: new Date(Date.now() + 30 * DAY).toISOString(),
      ...over,
    },
    keys.privateKey,
  );
}

export interface LicensingSidecar {
  sidecar: RunningSidecar;
  token: string;
  dataDir: string;
  /** What the API needs to reach this sidecar. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** A real sidecar without Janus (BIMS_JANUS=off), with its software dongle in a fresh directory. */
export async function startLicensingSidecar(env: Record<string, string> = {}): Promise<LicensingSidecar> {
  const token = randomBytes(32).toString('base64url');
  const dataDir = mkdtempSync(join(tmpdir(), 'bims-sidecar-'));
  const config = loadConfig({
    BIMS_SIDECAR_PORT: '0',
    BIMS_SIDECAR_TOKEN: token,
    BIMS_JANUS: 'off',
    BIMS_SIDECAR_DATA_DIR: dataDir,
    BIMS_DONGLE_SYSFS_ROOT: join(dataDir, 'no-usb'),
    BIMS_LOG_LEVEL: 'silent',
    ...env,
  });
  const sidecar = await startSidecar(config, createLogger('silent'));
  return {
    sidecar,
    token,
    dataDir,
    env: { BIMS_SIDECAR_URL: sidecar.url, BIMS_SIDECAR_TOKEN: token },
    async stop() {
      await sidecar.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
