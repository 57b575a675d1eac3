import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium, headless, with the flags this closed network needs (no background connections).
 * `netns`: run it inside that network namespace (root only), so the only networks it sees are that namespace's.
 */
export function launchChromium(extraArgs: string[] = [], options: { netns?: string } = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: options.netns
      ? fileURLToPath(new URL('./chromium-in-netns.sh', import.meta.url))
      : '/usr/bin/chromium',
    env: options.netns ? { ...process.env, BIMS_CHROMIUM_NETNS: options.netns } : undefined,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}
