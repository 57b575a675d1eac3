// Types of scripts/tool.mjs for the TypeScript that uses it (tests, benchmarks).
import type { createRequire } from 'node:module';

/**
 * Install tools/<name> unless its node_modules already matches its package.json and lock (linked to the machine's
 * tool store when it can be made); returns its folder. `tools` is the tools/ folder (another clone's, in tests).
 */
export function ensureTool(name: string, tools?: string): string;
/** The machine's store of tool installs: BIMS_TOOLS_STORE, else $XDG_CACHE_HOME/bims/tools or ~/.cache/bims/tools. */
export function toolStore(): string;
/** Absolute path of `file` (relative to node_modules) inside tools/<name>, installed first if needed. */
export function toolPath(name: string, file: string): string;
/** `require` resolving from tools/<name> (for CommonJS packages such as onnxruntime-node). */
export function toolRequire(name: string): ReturnType<typeof createRequire>;
