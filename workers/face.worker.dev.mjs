// Development bootstrap for workers/face.worker.ts (tsx, vitest): registers tsx inside the worker thread,
// then loads the TypeScript entry. A build with tsc uses workers/face.worker.js directly.
import { register } from 'tsx/esm/api';

register();
await import('./face.worker.ts');
