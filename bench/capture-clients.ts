// The capture bench's browsers driven from a process of their own (`capture --clients child`): the Chromiums'
// launches (a fork of the process that launches them), their Playwright client and its handling of every
// protocol message (each page polls its capture every 300 ms, and Playwright follows each request) then cost
// this small process instead of the one holding the service, whose CPU per analysed frame the bench reports.
// In the service's process they were about a fifth of its main thread at six sessions (perf, load 11-15).
// The parent sends { id, rig, clip, params } (rig: the little of the CaptureRig a page needs) and gets back
// { id, capture } or { id, error }.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { captureInBrowser, type BrowserCapture, type CaptureRig } from '../test/support/capture-rig.js';

/** What a page needs of the rig: the media path (its network namespace), the page's and the API's addresses. */
type PageRig = Pick<CaptureRig, 'net'> & { page: { url: string }; api: { url: string } };

interface Job {
  id: number;
  rig: PageRig;
  clip: string;
  params: Record<string, unknown>;
}
type Reply = { id: number; capture: BrowserCapture } | { id: number; error: string };

/** The child: runs each job's capture as the bench would in its own process. */
if (process.argv[2] === '--child') {
  process.on('message', (job: Job) => {
    // Only net.mode and net.netns are read of the media path, and the two addresses.
    const rig = job.rig as unknown as CaptureRig;
    captureInBrowser(rig, job.clip, job.params).then(
      (capture) => process.send!({ id: job.id, capture } satisfies Reply),
      (error: Error) => process.send!({ id: job.id, error: error.message } satisfies Reply),
    );
  });
  process.send!({ ready: true });
}

export interface CaptureClients {
  pid: number | undefined;
  capture(rig: CaptureRig, clip: string, params: Record<string, unknown>): Promise<BrowserCapture>;
  close(): void;
}

/**
 * Start the driver process. Forked before the service and its pool exist, so that its own fork is cheap; it
 * inherits the environment (tsx through --import).
 */
export async function startCaptureClients(): Promise<CaptureClients> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((ready, failed) => {
    child.once('message', () => ready());
    child.once('exit', (code) => failed(new Error(`the capture clients' process exited (${code})`)));
  });
  const waiting = new Map<number, { resolve(c: BrowserCapture): void; reject(e: Error): void }>();
  child.on('message', (reply: Reply) => {
    const w = waiting.get(reply.id);
    waiting.delete(reply.id);
    if ('error' in reply) w?.reject(new Error(reply.error));
    else w?.resolve(reply.capture);
  });
  let next = 0;
  return {
    pid: child.pid,
    capture(rig, clip, params) {
      const id = next++;
      const pageRig: PageRig = { net: rig.net, page: { url: rig.page.url }, api: { url: rig.api.url } };
      // net holds a function (down); the IPC channel's JSON leaves it out.
      child.send({ id, rig: JSON.parse(JSON.stringify(pageRig)), clip, params } satisfies Job);
      return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
    },
    close() {
      child.kill();
    },
  };
}
