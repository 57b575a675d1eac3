import { afterAll } from 'vitest';
import { nativeFetchGlobals, restoreFetchGlobals } from './fetch-globals.js';

// A setup file (vitest.config.ts): noted before the worker's first test file runs, put back after each one, so
// a file that started a server in process does not hand its replaced globals to the next (fetch-globals.ts).
const saved = nativeFetchGlobals();
afterAll(() => restoreFetchGlobals(saved));
