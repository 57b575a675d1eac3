import { createServer } from 'node:net';

/**
 * A port for a server a test starts in another process: free now, and below the kernel's ephemeral range
 * (32768 and up on Linux), where the outgoing connections of suites running alongside take theirs, so it is
 * not taken by one of them between this check and the child's listen.
 */
export async function serverPort(): Promise<string> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return String(port);
  }
}
