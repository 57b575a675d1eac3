#!/usr/bin/env node
// The `bims` command of the npm package: one entry for the Node programs of the repository. Each command is
// the same module `npm start` / `npm run <script>` runs; the command word is taken out of process.argv first,
// so every program parses its own options exactly as it does when run directly.
export {};

const COMMANDS: Record<string, { what: string; load: () => Promise<unknown> }> = {
  serve: {
    what: 'run the service (configuration from the environment: docs/configuration.md)',
    load: () => import('./node.js'),
  },
  migrate: { what: 'apply pending database migrations and exit', load: () => import('./commands/migrate.js') },
  reextract: {
    what: 're-extract outdated templates after a model upgrade (--dry-run, --help)',
    load: () => import('./commands/reextract.js'),
  },
  eval: {
    what: 'measure recognition accuracy on a dataset of identity/image files (--dataset DIR)',
    load: () => import('./commands/eval.js'),
  },
  'extraction-service': {
    what: 'offer face and voice extraction over HTTP to instances with BIMS_EXTRACTION_URL (e.g. Workers)',
    load: () => import('./node-extraction.js'),
  },
  matcher: {
    what: 'hold gallery shards and answer searches over NATS (--shards 0,1; BIMS_NATS_URL: docs/scale-out.md)',
    load: () => import('./commands/matcher.js'),
  },
  licence: {
    what: 'vendor tools: keygen, issue (a licence), update (a dongle update); no options for usage',
    load: () => import('./commands/licence.js'),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'Usage: bims <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.what}`),
    '',
    'Configuration comes from environment variables (DATABASE_URL, PORT, BIMS_*): every one is in docs/configuration.md.',
  ].join('\n');
}

const command = process.argv[2];
if (!command || command === '--help' || command === '-h' || command === 'help') {
  console.log(usage());
} else if (!Object.hasOwn(COMMANDS, command)) {
  console.error(`bims: unknown command '${command}'\n\n${usage()}`);
  process.exitCode = 2;
} else {
  process.argv.splice(2, 1);
  await COMMANDS[command]!.load();
}
