import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Read the docs page's Swagger UI assets from the installed `swagger-ui-dist` package (no CDN). */
export function nodeAssetReader(): (name: string) => Promise<Uint8Array | null> {
  const require = createRequire(import.meta.url);
  const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'));
  return async (name) => {
    try {
      return new Uint8Array(await readFile(join(swaggerDir, name)));
    } catch {
      return null;
    }
  };
}
