import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from '../config/config.js';

/**
 * Configuration of a Node process (server, sidecar, CLI) from process.env; an invalid environment prints
 * the message naming each bad variable and exits with status 2, before anything starts. Settings given as
 * files (BIMS_LICENCE_FILE) are read here, so the runtime-neutral core only ever sees their text.
 */
export function loadConfigOrExit(): Config {
  try {
    return withFiles(loadConfig(process.env));
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}

/** Read BIMS_LICENCE_FILE into BIMS_LICENCE (an inline BIMS_LICENCE wins). */
export function withFiles(config: Config): Config {
  if (!config.BIMS_LICENCE_FILE || config.BIMS_LICENCE) return config;
  let text: string;
  try {
    text = readFileSync(config.BIMS_LICENCE_FILE, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(
      `Invalid configuration:\n  BIMS_LICENCE_FILE: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  return { ...config, BIMS_LICENCE: text };
}
