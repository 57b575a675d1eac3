// Types of layout-cache.mjs for the TypeScript tests that import it.
export function layoutDigest(root: string, dirs: string[]): string;
export function restoreLayout(name: string, digest: string, root: string, dirs: string[], cache?: string): boolean;
export function keepLayout(name: string, digest: string, root: string, dirs: string[], cache?: string): void;
