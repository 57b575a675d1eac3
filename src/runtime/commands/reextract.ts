/**
 * `npm run reextract`: re-extract every subject whose templates are not of the current template version
 * (after a model upgrade), with a progress bar on stderr and a JSON summary on stdout. The work itself is
 * the runtime-neutral job in src/services/reextract/job.ts; this file only boots the services the way the
 * Node server does, parses options and draws.
 */
import { hostname } from 'node:os';
import { loadConfigOrExit } from '../node-config.js';
import { parseArgs } from 'node:util';
import { boot } from '../bootstrap.js';
import { createExtractor } from '../../extraction/index.js';
import { extractorOptionsOf } from '../extractor-options.js';
import { chooseFaceBackend } from '../../extraction/node-face-backend.js';
import { runReextractJob } from '../../services/reextract/job.js';
import { DomainError } from '../../services/errors.js';
import { progressBar } from './progress-bar.js';

const HELP = `Usage: npm run reextract -- [options]

Re-extracts the face templates of every subject whose template version differs from the current models',
from the subjects' stored original images, each subject in its own transaction (REEXTRACT operations).
Resumable: a run only picks subjects not yet at the current version, so stop it (Ctrl-C finishes the
subjects in flight) and run it again to carry on. Subjects that cannot be re-extracted (a sample enrolled
from an old template, no face found) are listed in the summary and stay outdated.

Options:
  --dry-run          count the outdated subjects (by template version) and change nothing
  --limit N          re-extract at most N subjects in this run
  --batch-size N     subjects read per query (default 100)
  --concurrency N    subjects re-extracted at once (default: BIMS_EXTRACTION_WORKERS, else 2)
  -h, --help         show this help

Configuration comes from the environment, as for the server: DATABASE_URL for PostgreSQL, otherwise the
embedded PGlite database in BIMS_DATA_DIR (default ./data).
With PGlite, STOP THE SERVER FIRST: an embedded database can be opened by one process only.
With PostgreSQL the server may keep running: each re-extracted subject is announced (LISTEN/NOTIFY) and the
running servers' galleries take its new templates within a second.

Output: a progress bar on stderr; a JSON summary on stdout. Exit code 0 when every subject was
re-extracted, 1 when some failed or the run failed, 2 for bad options or configuration.`;

function positive(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a whole number of at least 1`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      options: {
        'dry-run': { type: 'boolean', default: false },
        limit: { type: 'string' },
        'batch-size': { type: 'string' },
        concurrency: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
    return 2;
  }
  if (args.help) {
    console.log(HELP);
    return 0;
  }
  const limit = positive('limit', args.limit);
  const batchSize = positive('batch-size', args['batch-size']);
  const config = loadConfigOrExit();
  const workers = config.BIMS_EXTRACTION_WORKERS;
  const concurrency = positive('concurrency', args.concurrency) ?? (workers > 0 ? workers : 2);

  const booted = await boot({
    config,
    runtime: `node ${process.version} (reextract)`,
    hostname: hostname(),
    announceAdminPassword: (password) =>
      console.error(`BIMS created the account 'admin' with the password: ${password} (shown only this once)`),
    // The same backend a server on this host takes (`auto`: native where installed): templates match either way.
    createExtractor: () =>
      createExtractor(
        extractorOptionsOf(
          config,
          config.BIMS_EXTRACTION_URL ? {} : { backend: chooseFaceBackend(config.BIMS_EXTRACTION_BACKEND).backend },
        ),
      ),
  });
  const stop = new AbortController();
  const interrupt = () => {
    if (stop.signal.aborted) process.exit(130);
    process.stderr.write('\nstopping after the subjects in flight (Ctrl-C again to quit at once)\n');
    stop.abort();
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  const bar = progressBar(process.stderr);
  try {
    const summary = await runReextractJob(booted.services, {
      dryRun: args['dry-run'],
      limit,
      batchSize,
      concurrency,
      signal: stop.signal,
      onProgress: args['dry-run']
        ? undefined
        : (p) => bar.update({ done: p.done, total: p.total, failed: p.failed, label: p.currentSubjectId }),
    });
    bar.finish();
    console.log(JSON.stringify(summary, null, 2));
    return summary.failed > 0 ? 1 : 0;
  } finally {
    await booted.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    // The operator runs this command: the cause kept from API clients (which service, which model file) is theirs.
    const cause = error instanceof DomainError && error.operatorDetail ? ` (${error.operatorDetail})` : '';
    console.error(`re-extraction failed: ${error instanceof Error ? error.message : String(error)}${cause}`);
    process.exit(1);
  },
);
