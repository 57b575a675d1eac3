import { ConfigError, loadConfig, type Config } from '../config/config.js';

/**
 * Configuration of a Node process (server, sidecar, CLI) from process.env; an invalid environment prints
 * the message naming each bad variable and exits with status 2, before anything starts.
 */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}
