import { createServer, type Server } from 'node:net';

/** Listen on `port` of 127.0.0.1; the open server, or null when the port is taken. */
function hold(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(null));
    probe.listen(port, '127.0.0.1', () => resolve(probe));
  });
}

/**
 * Distinct ports for servers a test starts (often in another process): free now, and below the kernel's
 * ephemeral range (32768 and up on Linux), where the outgoing connections of suites running alongside take
 * theirs, so none is taken by one of them between this check and the server's listen. They are held open
 * together while they are chosen, so the same port is not handed out twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    if (ports.includes(port)) continue;
    const server = await hold(port);
    if (!server) continue;
    held.push(server);
    ports.push(port);
  }
  await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** One free port below the ephemeral range (see `freePorts`), as a string for environment variables. */
export async function serverPort(): Promise<string> {
  return String((await freePorts(1))[0]);
}
