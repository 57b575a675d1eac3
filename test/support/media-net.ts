import { execFile } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testSettings } from './test-settings.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../../scripts/media-net.sh', import.meta.url));

/**
 * Where the real WebRTC test's media flows.
 * - `isolated`: a veth pair made by scripts/media-net.sh; Janus gathers only on the host end (`hostIf`,
 *   `hostAddr`), Chromium runs in the namespace holding the other end (`peerAddr`) and can reach nothing else.
 * - `host`: the machine's own non-loopback addresses (Janus skips loopback), when the isolated network cannot
 *   be made here (not root); the kernel still keeps host-to-itself traffic inside the host.
 */
export type MediaNet =
  | {
      mode: 'isolated';
      netns: string;
      hostIf: string;
      hostAddr: string;
      peerAddr: string;
      describe: string;
      down(): Promise<void>;
    }
  | { mode: 'host'; reason: string; hostAddrs: string[]; describe: string; down(): Promise<void> };

/**
 * Make the isolated media network for this process, or say why not. BIMS_TEST_MEDIA_NET=isolated demands it,
 * =host skips it, =auto falls back when it cannot be made; unset, root demands it (CI runs as root, and there the test must prove the loopback-only
 * path) and anyone else falls back to `host`.
 */
export async function setUpMediaNet(): Promise<MediaNet> {
  // testSettings() refuses any other value than isolated, host or auto, naming the variable.
  const wanted = testSettings().BIMS_TEST_MEDIA_NET ?? (process.getuid?.() === 0 ? 'isolated' : 'auto');
  const hostAddrs = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && a.family === 'IPv4' && !a.internal)
    .map((a) => a!.address);
  const host = (reason: string): MediaNet => ({
    mode: 'host',
    reason,
    hostAddrs,
    describe: `host addresses ${hostAddrs.join(', ') || '(none)'} (fallback: ${reason})`,
    down: async () => {},
  });
  if (wanted === 'host') return host('BIMS_TEST_MEDIA_NET=host');

  const owner = String(process.pid);
  let out: string;
  try {
    ({ stdout: out } = await run('bash', [script, 'up', owner]));
  } catch (error) {
    const reason = ((error as { stderr?: string }).stderr ?? (error as Error).message).trim();
    if (wanted === 'isolated') {
      throw new Error(
        `the isolated media network could not be made: ${reason} (BIMS_TEST_MEDIA_NET=host runs the test over the host's addresses instead)`,
      );
    }
    return host(reason);
  }
  const v = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => line.split('=') as [string, string]),
  );
  const down = async () => {
    await run('bash', [script, 'down', owner]);
  };
  return {
    mode: 'isolated',
    netns: v.NETNS!,
    hostIf: v.HOST_IF!,
    hostAddr: v.HOST_ADDR!,
    peerAddr: v.PEER_ADDR!,
    down,
    describe: `isolated veth ${v.HOST_IF} ${v.HOST_ADDR} <-> ${v.PEER_ADDR} in netns ${v.NETNS}`,
  };
}
