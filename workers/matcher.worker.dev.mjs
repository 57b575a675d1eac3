// Development bootstrap for workers/matcher.worker.ts (tsx, vitest): registers tsx inside the worker thread,
// then loads the TypeScript entry. A build with tsc uses workers/matcher.worker.js directly.
import { register } from 'tsx/esm/api';

register();
await import('./matcher.worker.ts');
