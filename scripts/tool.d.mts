// Types of scripts/tool.mjs for the TypeScript that uses it (tests, benchmarks).
import type { createRequire } from 'node:module';

/** Install tools/<name> unless its node_modules already matches its package-lock.json; returns its folder. */
export function ensureTool(name: string): string;
/** Absolute path of `file` (relative to node_modules) inside tools/<name>, installed first if needed. */
export function toolPath(name: string, file: string): string;
/** `require` resolving from tools/<name> (for CommonJS packages such as onnxruntime-node). */
export function toolRequire(name: string): ReturnType<typeof createRequire>;
