// The capture bench's browsers driven from a process of their own (`capture --clients child`): the Chromiums'
// launches (a fork of the process that launches them), their Playwright client and its handling of every
// protocol message (each page polls its capture every 300 ms, and Playwright follows each request) then cost
// this small process instead of the one holding the service, whose CPU per analysed frame the bench reports.
// In the service's process they were about a fifth of its main thread at six sessions (perf, load 11-15).
// The parent sends { id, op: 'open', rig, clip } (rig: the little of the CaptureRig a page needs) and gets back
// { id, opened: true }; then { id, op: 'start', params } and gets { id, capture } (the page closed after it), or
// { id, error } for either.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  openForOneCapture,
  type BrowserCapture,
  type CapturePage,
  type CaptureRig,
  type PageRig,
} from '../test/support/capture-rig.js';

type Job =
  | { id: number; op: 'open'; rig: PageRig; clip: string }
  | { id: number; op: 'start'; params: Record<string, unknown> };
type Reply = { id: number; opened: true } | { id: number; capture: BrowserCapture } | { id: number; error: string };

/** The child: opens pages and runs their captures as the bench would in its own process. */
if (process.argv[2] === '--child') {
  const pages = new Map<number, Pick<CapturePage, 'start'>>();
  const fail = (id: number) => (error: Error) => process.send!({ id, error: error.message } satisfies Reply);
  process.on('message', (job: Job) => {
    if (job.op === 'open')
      openForOneCapture(job.rig, job.clip).then((page) => {
        pages.set(job.id, page);
        process.send!({ id: job.id, opened: true } satisfies Reply);
      }, fail(job.id));
    else {
      const page = pages.get(job.id)!;
      pages.delete(job.id);
      page.start(job.params).then((capture) => process.send!({ id: job.id, capture } satisfies Reply), fail(job.id));
    }
  });
  process.send!({ ready: true });
}

export interface CaptureClients {
  pid: number | undefined;
  /** A page opened in the child, ready to capture (openCapturePage); its capture closes it. */
  open(rig: CaptureRig, clip: string): Promise<{ start(params: Record<string, unknown>): Promise<BrowserCapture> }>;
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
  const waiting = new Map<number, { resolve(r: Reply): void; reject(e: Error): void }>();
  child.on('message', (reply: Reply) => {
    const w = waiting.get(reply.id);
    waiting.delete(reply.id);
    if ('error' in reply) w?.reject(new Error(reply.error));
    else w?.resolve(reply);
  });
  const ask = (job: Job) => {
    child.send(job);
    return new Promise<Reply>((resolve, reject) => waiting.set(job.id, { resolve, reject }));
  };
  let next = 0;
  return {
    pid: child.pid,
    async open(rig, clip) {
      const id = next++;
      const pageRig: PageRig = { net: rig.net, page: { url: rig.page.url }, api: { url: rig.api.url } };
      // net holds a function (down); the IPC channel's JSON leaves it out.
      await ask({ id, op: 'open', rig: JSON.parse(JSON.stringify(pageRig)), clip });
      return {
        start: async (params) => ((await ask({ id, op: 'start', params })) as { capture: BrowserCapture }).capture,
      };
    },
    close() {
      child.kill();
    },
  };
}
