import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from '../logger.js';
import { findJanusLibDir, writeJanusConfig, type JanusConfigValues } from './janus-config.js';

/** Where Janus is in its life: `running` is the only state in which the API may use it. */
type JanusState = 'starting' | 'running' | 'restarting' | 'stopped';

/** The configuration values of each start (the folder is the supervisor's own), plus how to supervise. */
interface JanusSupervisorOptions extends Omit<JanusConfigValues, 'configDir' | 'libDir'> {
  bin: string;
  /** Janus's plugin folder; found in the usual places when absent. */
  libDir?: string;
  log: Logger;
  /** How often Janus is asked for `info` while running, and how long one answer may take. */
  healthIntervalMs?: number;
  healthTimeoutMs?: number;
  /** Consecutive failed health checks after which Janus is killed and started again. */
  maxHealthFailures?: number;
  /** How long a fresh Janus may take to answer `info` before it counts as a failed start. */
  startTimeoutMs?: number;
  /** Restart delays: doubling from the first to the last, back to the first after a stable minute. */
  backoffMs?: { first: number; max: number };
}

/** What the sidecar reports about Janus. Holds the secrets, so it is only ever sent to an authenticated caller. */
interface JanusSnapshot {
  state: JanusState;
  pid: number | null;
  /** When the current state began. */
  since: string;
  restarts: number;
  lastError: string | null;
  version: string | null;
  janus: { url: string; adminUrl: string; apiSecret: string; adminSecret: string };
}

/**
 * Starts Janus with a configuration generated from the repository's templates, watches it, and starts it
 * again when it dies or stops answering. Janus itself restarts in well under a second, so the backoff only
 * matters when something is persistently wrong (a port in use, a missing binary).
 */
export class JanusSupervisor {
  private child: ChildProcess | null = null;
  private state: JanusState = 'stopped';
  private since = new Date();
  private restarts = 0;
  private consecutiveFailures = 0;
  private lastError: string | null = null;
  private version: string | null = null;
  private configDir: string | null = null;
  private healthTimer: ReturnType<typeof setInterval> | null = null;
  private restartTimer: ReturnType<typeof setTimeout> | null = null;
  private healthFailures = 0;
  /** Why we killed Janus ourselves, reported instead of the bare exit signal. */
  private killReason: string | null = null;
  private stopping = false;
  private readonly tail: string[] = [];
  readonly url: string;
  readonly adminUrl: string;

  constructor(private readonly options: JanusSupervisorOptions) {
    this.url = `http://127.0.0.1:${options.httpPort}/janus`;
    this.adminUrl = `http://127.0.0.1:${options.adminPort}/admin`;
  }

  /**
   * If this process ends without calling stop() (an uncaught error, a test runner's exit), Janus must not
   * outlive it, nor its configuration (which holds the secrets): 'exit' listeners run synchronously, and so do these.
   */
  private readonly killOnExit = () => {
    this.child?.kill('SIGKILL');
    if (this.configDir) rmSync(this.configDir, { recursive: true, force: true });
  };

  /** Start Janus; resolves once the first attempt is over (running or not: `snapshot().state` says which). */
  async start(): Promise<void> {
    this.stopping = false;
    this.configDir ??= await mkdtemp(join(tmpdir(), 'bims-janus-'));
    process.on('exit', this.killOnExit);
    await this.launch();
  }

  /** Stop Janus (SIGTERM, then SIGKILL after three seconds) and remove the generated configuration. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.clearTimers();
    process.off('exit', this.killOnExit);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    this.child = null;
    this.setState('stopped');
    if (this.configDir) await rm(this.configDir, { recursive: true, force: true });
    this.configDir = null;
  }

  snapshot(): JanusSnapshot {
    return {
      state: this.state,
      pid: this.child?.pid ?? null,
      since: this.since.toISOString(),
      restarts: this.restarts,
      lastError: this.lastError,
      version: this.version,
      janus: {
        url: this.url,
        adminUrl: this.adminUrl,
        apiSecret: this.options.apiSecret,
        adminSecret: this.options.adminSecret,
      },
    };
  }

  private setState(state: JanusState): void {
    if (this.state !== state) this.since = new Date();
    this.state = state;
  }

  private clearTimers(): void {
    if (this.healthTimer) clearInterval(this.healthTimer);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.healthTimer = this.restartTimer = null;
  }

  private async launch(): Promise<void> {
    if (this.stopping || !this.configDir) return;
    this.setState(this.restarts === 0 && this.state !== 'restarting' ? 'starting' : 'restarting');
    const o = this.options;
    const libDir = findJanusLibDir(o.libDir);
    if (!libDir)
      return this.failed(
        'Janus is not installed (no libjanus_http.so found); run scripts/ensure-janus.sh or set BIMS_JANUS_LIB_DIR',
      );
    try {
      const { httpPort, adminPort, apiSecret, adminSecret, sessionTimeout, logLevel, iceEnforceList } = o;
      await writeJanusConfig({
        configDir: this.configDir,
        libDir,
        httpPort,
        adminPort,
        apiSecret,
        adminSecret,
        sessionTimeout,
        logLevel,
        iceEnforceList,
      });
    } catch (error) {
      return this.failed(`could not write the Janus configuration: ${(error as Error).message}`);
    }
    if (this.stopping) return;
    const child = spawn(o.bin, ['-F', this.configDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on('line', (line) => this.remember(line));
    }
    child.on('error', (error) => {
      if (this.child !== child) return;
      this.child = null;
      this.failed(`could not run ${o.bin}: ${error.message}`);
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      if (this.stopping) return;
      this.failed(this.killReason ?? `Janus exited (${signal ? `signal ${signal}` : `code ${code}`})`);
      this.killReason = null;
    });
    const ready = await this.waitReady(child);
    if (!ready || this.child !== child || this.stopping) {
      if (this.child === child && !this.stopping) {
        this.killReason = `Janus did not answer within ${o.startTimeoutMs ?? 10_000} ms of starting`;
        child.kill('SIGKILL');
      }
      return;
    }
    this.setState('running');
    this.healthFailures = 0;
    o.log.info('janus running', { pid: child.pid, url: this.url, adminUrl: this.adminUrl, version: this.version });
    this.healthTimer = setInterval(() => void this.checkHealth(child), o.healthIntervalMs ?? 2000);
  }

  /** Ask `info` every 100 ms until Janus answers, dies, or the start timeout passes. */
  private async waitReady(child: ChildProcess): Promise<boolean> {
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 10_000);
    while (Date.now() < deadline && this.child === child && !this.stopping) {
      if (await this.ping(500)) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  }

  /** One `info` request; Janus answers it without the API secret. */
  private async ping(timeoutMs: number): Promise<boolean> {
    try {
      const response = await fetch(`${this.url}/info`, { signal: AbortSignal.timeout(timeoutMs) });
      const body = (await response.json()) as { janus?: string; version_string?: string };
      if (body.janus !== 'server_info') return false;
      this.version = body.version_string ?? null;
      return true;
    } catch {
      return false;
    }
  }

  private async checkHealth(child: ChildProcess): Promise<void> {
    if (this.child !== child || this.state !== 'running') return;
    if (await this.ping(this.options.healthTimeoutMs ?? 1000)) {
      this.healthFailures = 0;
      return;
    }
    this.healthFailures += 1;
    if (this.healthFailures >= (this.options.maxHealthFailures ?? 3) && this.child === child) {
      this.killReason = `Janus did not answer ${this.healthFailures} health checks in a row`;
      this.options.log.warn('janus unresponsive: killing it', { pid: child.pid });
      child.kill('SIGKILL');
    }
  }

  /** Note what went wrong and schedule the next start. */
  private failed(reason: string): void {
    this.clearTimers();
    if (this.stopping) return;
    // A Janus that ran for a minute was healthy: start the backoff from the beginning again.
    if (this.state === 'running' && Date.now() - this.since.getTime() > 60_000) this.consecutiveFailures = 0;
    this.lastError = reason;
    this.setState('restarting');
    const { first, max } = this.options.backoffMs ?? { first: 500, max: 30_000 };
    const delay = Math.min(max, first * 2 ** this.consecutiveFailures);
    this.consecutiveFailures += 1;
    this.options.log.warn('janus down: restarting', { reason, inMs: delay, recentOutput: this.tail.slice(-10) });
    this.restartTimer = setTimeout(() => {
      this.restarts += 1;
      void this.launch();
    }, delay);
  }

  private remember(line: string): void {
    this.tail.push(line);
    if (this.tail.length > 50) this.tail.shift();
    this.options.log.debug('janus', { line });
  }
}
