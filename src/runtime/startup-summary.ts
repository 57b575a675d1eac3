// Node-only: what `npm start` tells the person who ran it, in plain lines on stderr. Where BIMS answers (URL,
// API docs, dashboard), which database it uses, and each capability (faces, voice, media gateway, licence):
// on, or off with why and the one command that turns it on. Also installs Janus before the sidecar starts when
// it is missing and this process may install it (root with apt-get), the way the tests do.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseUrlOf, type Config } from '../config/config.js';
import { BiometricError } from '../biometrics/errors.js';
import { DomainError } from '../services/errors.js';
import type { Services } from '../services/index.js';
import { VERSION } from '../version.js';

const ENSURE_JANUS = fileURLToPath(new URL('../../scripts/ensure-janus.sh', import.meta.url));

/** One capability's line: on, or off with why and what turns it on. */
interface Capability {
  on: boolean;
  detail: string;
  turnOn?: string;
}

/** The executable `bin` names (a path, or a name looked up in PATH), or null. */
export function findProgram(bin: string, path = process.env.PATH ?? ''): string | null {
  const candidates = bin.includes('/')
    ? [bin]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, bin));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not this one
    }
  }
  return null;
}

/**
 * What to do about Janus before the sidecar starts: nothing (found), install it (Debian's package, as
 * scripts/ensure-janus.sh does for the tests: only for the default program name, as root, with apt-get), or
 * report it missing.
 */
export function janusPlan(
  config: Pick<Config, 'BIMS_JANUS_BIN'>,
  machine: { found: boolean; root: boolean; aptGet: boolean },
): 'present' | 'install' | 'missing' {
  if (machine.found) return 'present';
  return config.BIMS_JANUS_BIN === 'janus' && machine.root && machine.aptGet ? 'install' : 'missing';
}

/**
 * The media gateway's state before the sidecar starts, installing Janus first when it is missing and may be
 * installed (the installer's output goes to stderr). Call before startSidecarChild.
 */
export function prepareGateway(
  config: Config,
  write: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Capability {
  if (config.BIMS_SIDECAR === 'off') {
    return config.BIMS_SIDECAR_URL
      ? { on: true, detail: `through the sidecar at ${config.BIMS_SIDECAR_URL}` }
      : { on: false, detail: 'the sidecar is off (BIMS_SIDECAR=off)', turnOn: 'unset BIMS_SIDECAR and start again' };
  }
  if (config.BIMS_JANUS === 'off')
    return { on: false, detail: 'Janus is off (BIMS_JANUS=off)', turnOn: 'unset BIMS_JANUS and start again' };
  const found = findProgram(config.BIMS_JANUS_BIN);
  const plan = janusPlan(config, {
    found: found !== null,
    root: process.getuid?.() === 0,
    aptGet: findProgram('apt-get') !== null,
  });
  if (found) return { on: true, detail: `Janus at ${found}` };
  const install =
    config.BIMS_JANUS_BIN === 'janus'
      ? `${process.getuid?.() === 0 ? '' : 'sudo '}bash scripts/ensure-janus.sh`
      : 'install Janus or point BIMS_JANUS_BIN at it';
  if (plan === 'install') {
    write(
      "BIMS: Janus (the media gateway) is not installed: installing Debian's janus package (scripts/ensure-janus.sh)...",
    );
    const r = spawnSync('bash', [ENSURE_JANUS], { stdio: ['ignore', 'inherit', 'inherit'] });
    const now = findProgram(config.BIMS_JANUS_BIN);
    if (r.status === 0 && now) return { on: true, detail: `Janus at ${now} (installed now)` };
    const off = {
      on: false,
      detail: `Janus is not installed and installing it failed (exit ${r.status ?? r.signal})`,
      turnOn: install,
    };
    write(`BIMS: gateway off: ${off.detail}; turn it on with: ${off.turnOn}`);
    return off;
  }
  const off = { on: false, detail: `Janus is not installed (${config.BIMS_JANUS_BIN} not found)`, turnOn: install };
  write(`BIMS: gateway off: ${off.detail}; turn it on with: ${off.turnOn}`);
  return off;
}

const within = <T>(ms: number, p: Promise<T>, fallback: T) =>
  Promise.race([p, new Promise<T>((r) => setTimeout(() => r(fallback), ms).unref())]);

/** Faces and voice, from the extraction engine itself (a voice job that is not audio answers whether the model is there). */
async function extraction(
  services: Services,
  facesBackend: string | undefined,
): Promise<{ faces: Capability; voice: Capability }> {
  const facesOff = {
    on: false,
    detail: 'the face models are not installed or cannot be loaded',
    turnOn: 'node scripts/fetch-models.mjs',
  };
  const voiceOff = {
    on: false,
    detail: 'the voice model is not installed or cannot be loaded',
    turnOn:
      "npm run voice-model (downloads Resemblyzer's checkpoint; offline: npm run voice-model -- --from pretrained.pt; docs/voice.md)",
  };
  let extractor;
  try {
    extractor = await services.extractors.get();
  } catch (error) {
    const reason = error instanceof DomainError ? error.detail : String(error);
    return { faces: { ...facesOff, detail: reason }, voice: { ...voiceOff, detail: 'no extraction engine' } };
  }
  const voice = await extractor.analyseVoice(new Uint8Array(4), { owner: 'startup' }).then(
    () => ({ on: true, detail: '' }),
    (error: unknown) =>
      BiometricError.is(error) && error.code === 'MODEL_UNAVAILABLE' ? voiceOff : { on: true, detail: '' },
  );
  return { faces: { on: true, detail: facesBackend ?? '' }, voice };
}

async function licence(services: Services): Promise<Capability> {
  const view = await within(5000, services.licensing.current(), null);
  if (!view) return { on: false, detail: 'the licence source did not answer within 5 s' };
  if (view.mode === 'UNLICENSED')
    return {
      on: false,
      detail: 'UNLICENSED: no licence is checked and every operation is unlimited',
      turnOn: 'set BIMS_LICENCE_PUBLIC_KEY (npm run licence -- keygen --out DIR makes a key pair)',
    };
  return view.state === 'VALID' ? { on: true, detail: view.message } : { on: false, detail: view.message };
}

/** Where the data is, without credentials. */
function databaseLine(config: Config, dialect: string): string {
  if (dialect !== 'postgres' || !config.DATABASE_URL) return `PGlite (embedded) in ${resolve(config.BIMS_DATA_DIR)}`;
  try {
    const u = new URL(config.DATABASE_URL);
    return `PostgreSQL ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return 'PostgreSQL';
  }
}

/** The summary's lines. */
export function summaryLines(s: {
  url: string;
  database: string;
  capabilities: Record<'faces' | 'voice' | 'gateway' | 'licence', Capability>;
}): string[] {
  const row = (name: string, text: string) => `  ${name.padEnd(10)} ${text}`;
  return [
    `BIMS ${VERSION} is ready`,
    row('URL', s.url),
    row('API docs', `${s.url}/docs`),
    row('dashboard', `${s.url}/dashboard/`),
    // The page to try a capture with a webcam works only with the media gateway, so it is named only then.
    ...(s.capabilities.gateway.on
      ? [row('camera', `${s.url}/dashboard/capture.html (enrol and verify with a webcam)`)]
      : []),
    row('database', s.database),
    ...Object.entries(s.capabilities).map(([name, c]) =>
      row(
        name,
        c.on ? `on${c.detail ? `: ${c.detail}` : ''}` : `off: ${c.detail}${c.turnOn ? `. Turn on: ${c.turnOn}` : ''}`,
      ),
    ),
  ];
}

/**
 * Print the summary on stderr once the extraction engine has warmed (or failed) and the licence is known, and
 * log it as one `startup summary` line; `facesBackend` says which backend runs the face models and why
 * (src/extraction/node-face-backend.ts). Never throws: a summary must not stop a running server.
 */
export async function reportStartup(
  services: Services,
  config: Config,
  gateway: Capability,
  facesBackend?: string,
): Promise<void> {
  try {
    const url = baseUrlOf(config);
    const [{ faces, voice }, lic] = await Promise.all([extraction(services, facesBackend), licence(services)]);
    const capabilities = { faces, voice, gateway, licence: lic };
    const database = databaseLine(config, services.ctx.dialect);
    if (config.BIMS_LOG_LEVEL !== 'silent')
      process.stderr.write(`\n${summaryLines({ url, database, capabilities }).join('\n')}\n\n`);
    services.ctx.log.info('startup summary', {
      url,
      database,
      ...Object.fromEntries(Object.entries(capabilities).map(([k, c]) => [k, c.on ? 'on' : `off: ${c.detail}`])),
    });
  } catch (error) {
    services.ctx.log.warn('startup summary failed', { reason: String(error) });
  }
}
