// Real NATS servers for the matcher cluster suites (test/cluster/): Debian's nats-server (scripts/ensure-nats.sh
// installs it; `npm test` runs that first) on free ports of their own, never the machine's own server on 4222.
// A cluster's servers route to each other; `started` resolves once every server sees all its peers.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePorts } from './ports.js';

const root = join(import.meta.dirname, '..', '..');
let binary: string | undefined;

/** The nats-server binary (installed when missing). */
function natsServer(): string {
  binary ??= execFileSync('bash', [join(root, 'scripts', 'ensure-nats.sh')], { encoding: 'utf8' }).trim();
  return binary;
}

/** One server of a test cluster. */
export interface TestNatsServer {
  name: string;
  /** Its client URL (nats://127.0.0.1:port). */
  url: string;
  child: ChildProcess | null;
  /** Stop it with a signal (SIGKILL: as a crash) and wait until it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start it again on the same ports; resolves once it has routes to its running peers. */
  restart(): Promise<void>;
}

/** A cluster of real NATS servers on free ports. */
export interface TestNatsCluster {
  servers: TestNatsServer[];
  /** Every server's client URL, comma-separated (BIMS_NATS_URL). */
  urls: string;
  stop(): Promise<void>;
}

async function get(url: string): Promise<Record<string, unknown> | null> {
  try {
    const res = await fetch(url);
    return res.ok ? ((await res.json()) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Start `size` nats-server processes routed into one cluster (each lists the others' route ports); resolves once
 * each reports routes to all of its peers (the monitoring endpoint /routez), so a message published on one server
 * reaches subscribers on any other from the first test on.
 */
export async function startNatsCluster(size = 3): Promise<TestNatsCluster> {
  const ports = await freePorts(size * 3);
  const cluster = `bims-test-${process.pid}-${Math.floor(Math.random() * 1e6)}`;
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `n${i}`,
    client: ports[i * 3]!,
    route: ports[i * 3 + 1]!,
    monitor: ports[i * 3 + 2]!,
  }));
  const running = new Set<string>();
  const servers: TestNatsServer[] = specs.map((spec) => {
    const server: TestNatsServer = {
      name: spec.name,
      url: `nats://127.0.0.1:${spec.client}`,
      child: null,
      async kill(signal = 'SIGKILL') {
        const child = server.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        running.delete(spec.name);
        child.kill(signal);
        await exited;
      },
      async restart() {
        const args = ['-a', '127.0.0.1', '-p', String(spec.client), '-m', String(spec.monitor), '-n', spec.name];
        if (size > 1) {
          const routes = specs.filter((s) => s !== spec).map((s) => `nats://127.0.0.1:${s.route}`);
          args.push(
            '--cluster_name',
            cluster,
            '--cluster',
            `nats://127.0.0.1:${spec.route}`,
            '--routes',
            routes.join(','),
          );
        }
        server.child = spawn(natsServer(), args, { stdio: 'ignore' });
        running.add(spec.name);
        // Routed to every running peer (all of them at the first start).
        for (let tries = 0; tries < 400; tries++) {
          const routez = await get(`http://127.0.0.1:${spec.monitor}/routez`);
          if (routez && Number(routez.num_routes ?? 0) >= running.size - 1) return;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        throw new Error(`nats-server ${spec.name} did not join its cluster`);
      },
    };
    return server;
  });
  await Promise.all(servers.map((s) => s.restart()));
  return {
    servers,
    urls: servers.map((s) => s.url).join(','),
    async stop() {
      await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    },
  };
}
