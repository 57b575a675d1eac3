// Where the service's connect spends its time (bench capture --stages --trace): the steps of
// CaptureRegistry.connect, timed by wrapping the methods it calls (the service exposes no such figure, and src/
// is not the bench's to change), plus the event loop's longest stall during the connect and each child process
// spawned in this process (the test sidecar runs here: its ffmpeg spawns block this event loop while they fork).
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { GatewayService } from '../src/services/gateway/gateway-service.js';
import { CaptureRegistry } from '../src/services/capture/capture-registry.js';
import { CaptureStore } from '../src/services/capture/capture-store.js';
import { DecoderClient } from '../src/gateway/decoder-client.js';
import { SessionRegistry } from '../src/services/gateway/session-registry.js';

/** One connect's steps: [name, start ms, end ms] from the service receiving it. */
export interface ConnectTrace {
  startedAt: number;
  steps: [string, number, number][];
  longestStallMs: number;
}

const traces: ConnectTrace[] = [];
let current: ConnectTrace | null = null;

function wrap(proto: object, name: string, label: string): void {
  const p = proto as Record<string, (...args: unknown[]) => unknown>;
  const real = p[name]!;
  p[name] = function (this: unknown, ...args: unknown[]) {
    const trace = current;
    const t0 = performance.now();
    const result = real.apply(this, args);
    if (!trace) return result;
    const done = () => trace.steps.push([label, t0 - trace.startedAt, performance.now() - trace.startedAt]);
    if (result instanceof Promise) return result.finally(done);
    done();
    return result;
  };
}

/** Install once, before the rig starts. */
export function traceConnects(): void {
  const gateway = GatewayService.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const connect = gateway.connect!;
  gateway.connect = function (this: unknown, ...args: unknown[]) {
    const trace: ConnectTrace = { startedAt: performance.now(), steps: [], longestStallMs: 0 };
    current = trace;
    traces.push(trace);
    // The event loop's stalls: a 1 ms timer that arrives late was held up by synchronous work.
    let last = performance.now();
    const watch = setInterval(() => {
      const now = performance.now();
      trace.longestStallMs = Math.max(trace.longestStallMs, now - last - 1);
      last = now;
    }, 1);
    return connect.apply(this, args).finally(() => {
      clearInterval(watch);
      trace.steps.push(['connect', 0, performance.now() - trace.startedAt]);
      if (current === trace) current = null;
    });
  };
  wrap(SessionRegistry.prototype, 'checkHandle', 'checkHandle');
  wrap(CaptureRegistry.prototype, 'start', 'start (row written)');
  wrap(CaptureStore.prototype, 'check', 'store.check');
  wrap(CaptureStore.prototype, 'admit', 'store.admit');
  wrap(GatewayService.prototype, 'adminKey', 'adminKey');
  wrap(GatewayService.prototype, 'pluginRequest', 'pluginRequest');
  wrap(GatewayService.prototype, 'messageForEvent', 'offer -> answer');
  wrap(DecoderClient.prototype, 'open', 'decoder open');
  const spawn = childProcess.spawn;
  childProcess.spawn = function (this: unknown, ...args: unknown[]) {
    const trace = current;
    const t0 = performance.now();
    const child = (spawn as (...a: unknown[]) => childProcess.ChildProcess).apply(this, args);
    if (trace)
      trace.steps.push([`spawn ${String(args[0])}`, t0 - trace.startedAt, performance.now() - trace.startedAt]);
    return child;
  } as typeof spawn;
  syncBuiltinESMExports();
}

/** The traces gathered since the last call, rounded. */
export function takeTraces(): ConnectTrace[] {
  const out = traces.splice(0).map((t) => ({
    startedAt: 0,
    longestStallMs: Math.round(t.longestStallMs),
    steps: t.steps.map(([n, a, b]) => [n, Math.round(a), Math.round(b)] as [string, number, number]),
  }));
  return out;
}
