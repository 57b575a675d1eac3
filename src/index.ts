/**
 * The package's library entry (`import { boot, createApp } from 'bims'`): the runtime-neutral pieces a host
 * program needs to embed BIMS, the same ones the Node, Deno and Workers entries use.
 *
 * @example
 * const booted = await boot({ config: loadConfig(myEnv), runtime: 'my-host', hostname: 'here' });
 * const res = await booted.app.request('/health');
 */
export { createApp, type App, type AppDeps } from './app.js';
export { boot, type BootOptions, type Booted } from './runtime/bootstrap.js';
export { ConfigError, configSchema, loadConfig, type Config } from './config/config.js';
export { createExtractor, type CreateExtractorOptions } from './extraction/index.js';
export { createInlineExtractor } from './extraction/inline.js';
export type { Extractor } from './extraction/extractor.js';
export { VERSION } from './version.js';
