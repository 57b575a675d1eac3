import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The templates kept in the repository (src/sidecar/janus/*.jcfg). */
const templateDir = fileURLToPath(new URL('./janus/', import.meta.url));

/**
 * The only libraries Janus may load: BIMS needs the echo test plugin, the VideoRoom plugin (capture sessions
 * publish into it and their media is forwarded to the sidecar's decoders) and the HTTP transport, nothing else.
 */
const allowedLibraries = {
  plugins: ['libjanus_echotest.so', 'libjanus_videoroom.so'],
  transports: ['libjanus_http.so'],
  loggers: [] as string[],
  events: [] as string[],
};

/** What varies between Janus starts: ports, secrets, folders. */
export interface JanusConfigValues {
  configDir: string;
  libDir: string;
  httpPort: number;
  adminPort: number;
  apiSecret: string;
  adminSecret: string;
  sessionTimeout: number;
  logLevel: number;
  iceEnforceList: string;
}

/**
 * Find the folder holding Janus's plugins: Debian puts it under the multiarch library folder
 * (/usr/lib/x86_64-linux-gnu/janus), a source build under /usr/local or /opt.
 */
export function findJanusLibDir(explicit?: string): string | undefined {
  if (explicit) return explicit;
  const candidates: string[] = [];
  try {
    for (const entry of readdirSync('/usr/lib')) candidates.push(join('/usr/lib', entry, 'janus'));
  } catch {
    // no /usr/lib: fall through to the fixed places
  }
  candidates.push('/usr/lib/janus', '/usr/local/lib/janus', '/opt/janus/lib/janus');
  return candidates.find((dir) => existsSync(join(dir, 'transports', 'libjanus_http.so')));
}

/** Every library of one kind except the allowed ones, as Janus's comma-separated `disable` value. */
async function disabledIn(libDir: string, kind: keyof typeof allowedLibraries): Promise<string> {
  let names: string[] = [];
  try {
    names = (await readdir(join(libDir, kind))).filter((n) => n.endsWith('.so'));
  } catch {
    return '';
  }
  return names
    .filter((n) => !allowedLibraries[kind].includes(n))
    .sort()
    .join(',');
}

/** Quote a value for a libconfig string: the secrets are ours, but a stray quote must never end the string. */
function jcfgString(value: string): string {
  if (/["\\\n\r]/.test(value))
    throw new Error('Janus configuration values may not contain quotes, backslashes or line breaks');
  return value;
}

/**
 * Write Janus's configuration folder: each template with its @NAME@ placeholders replaced. The folder holds
 * the secrets, so it is readable by its owner only.
 *
 * @example await writeJanusConfig({ configDir: '/tmp/bims-janus-x', libDir, httpPort: 8088, ... })
 */
export async function writeJanusConfig(values: JanusConfigValues): Promise<void> {
  const replacements: Record<string, string> = {
    CONFIG_DIR: jcfgString(values.configDir),
    LIB_DIR: jcfgString(values.libDir),
    HTTP_PORT: String(values.httpPort),
    ADMIN_PORT: String(values.adminPort),
    API_SECRET: jcfgString(values.apiSecret),
    ADMIN_SECRET: jcfgString(values.adminSecret),
    SESSION_TIMEOUT: String(values.sessionTimeout),
    LOG_LEVEL: String(values.logLevel),
    ICE_ENFORCE_LIST: jcfgString(values.iceEnforceList),
    DISABLED_PLUGINS: await disabledIn(values.libDir, 'plugins'),
    DISABLED_TRANSPORTS: await disabledIn(values.libDir, 'transports'),
    DISABLED_LOGGERS: await disabledIn(values.libDir, 'loggers'),
    DISABLED_EVENTS: await disabledIn(values.libDir, 'events'),
  };
  await mkdir(values.configDir, { recursive: true, mode: 0o700 });
  await chmod(values.configDir, 0o700);
  for (const name of (await readdir(templateDir)).filter((n) => n.endsWith('.jcfg'))) {
    let text = await readFile(join(templateDir, name), 'utf8');
    text = text.replace(/@([A-Z_]+)@/g, (whole, key: string) => {
      const value = replacements[key];
      if (value === undefined) throw new Error(`${name}: unknown placeholder ${whole}`);
      return value;
    });
    // An empty list means "none": drop the line, since Janus would read "" as a list with one empty entry.
    text = text.replace(/^\s*\w+ = ""\n/gm, '');
    await writeFile(join(values.configDir, name), text, { mode: 0o600 });
  }
}
