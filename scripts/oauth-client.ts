/**
 * `npm run oauth-client -- <command>`: register, list and remove OAuth clients for service integrations,
 * against the same database the server uses (DATABASE_URL, else the embedded PGlite in BIMS_DATA_DIR;
 * PGlite admits one process at a time, so stop the server first when using it).
 *
 *   add --name NAME --role ADMIN|ADJUDICATOR|USER [--redirect-uri URI]... [--json]
 *       Registers a confidential client and prints its client_id and secret. The secret is shown only
 *       this once (only its hash is stored). Without --redirect-uri the client may only use
 *       client_credentials; with one it may also run the authorization code flow (PKCE S256).
 *   list [--json]   Lists the clients (never their secrets).
 *   remove ID       Removes a client and revokes its refresh tokens; its access tokens stop working.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { connectDatabase, migrate } from '../src/db/connect.js';
import type { Role } from '../src/auth/roles.js';
import { listClients, registerClient, removeClient } from '../src/services/auth/oauth-clients.js';
import type { ServiceContext } from '../src/services/context.js';
import { DomainError } from '../src/services/errors.js';
import { createLogger } from '../src/logger.js';
import { VERSION } from '../src/version.js';

const usage = `usage: npm run oauth-client -- add --name NAME --role ADMIN|ADJUDICATOR|USER [--redirect-uri URI]... [--json]
       npm run oauth-client -- list [--json]
       npm run oauth-client -- remove CLIENT_ID`;

const roles: Role[] = ['ADMIN', 'ADJUDICATOR', 'USER'];

class UsageError extends Error {}

async function run(ctx: ServiceContext, argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      role: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  switch (command) {
    case 'add': {
      const role = values.role?.toUpperCase() as Role | undefined;
      if (!values.name || !role || !roles.includes(role) || rest.length)
        throw new UsageError('add needs --name and --role ADMIN|ADJUDICATOR|USER');
      const { client, clientSecret } = await registerClient(ctx, {
        name: values.name,
        role,
        redirectUris: values['redirect-uri'],
      });
      if (values.json) {
        console.log(JSON.stringify({ ...client, clientSecret }, null, 2));
      } else {
        console.log(`client_id:     ${client.clientId}`);
        console.log(`client_secret: ${clientSecret}`);
        console.log(`role:          ${client.role}`);
        console.log(`grants:        ${client.grantTypes.join(', ')}`);
        console.log('\nThe secret is shown only this once; store it now.');
      }
      return;
    }
    case 'list': {
      if (rest.length) throw new UsageError('list takes no arguments');
      const clients = await listClients(ctx);
      if (values.json) {
        console.log(JSON.stringify(clients, null, 2));
        return;
      }
      for (const c of clients) {
        const kind = c.builtin ? 'built-in public' : c.confidential ? 'confidential' : 'public';
        console.log(
          `${c.clientId}\t${c.role}\t${kind}\t${c.name}\t${c.grantTypes.join(',')}\t${c.redirectUris.join(' ')}`,
        );
      }
      return;
    }
    case 'remove': {
      if (rest.length !== 1) throw new UsageError('remove takes one client id');
      await removeClient(ctx, rest[0]!);
      console.log(`removed ${rest[0]}`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown command '${command}'` : 'a command is required');
  }
}

try {
  const config = loadConfig(process.env);
  const database = await connectDatabase({ url: config.DATABASE_URL, dataDir: config.BIMS_DATA_DIR });
  try {
    await migrate(database.db);
    const ctx: ServiceContext = {
      db: database.db,
      dialect: database.dialect,
      config,
      // Logs go to stderr so that stdout carries only the answer (and the secret), e.g. for `| jq`.
      log: createLogger(config.BIMS_LOG_LEVEL === 'info' ? 'warn' : config.BIMS_LOG_LEVEL, (line) =>
        console.error(line),
      ),
      now: () => new Date(),
      startedAt: new Date(),
      node: {
        id: crypto.randomUUID(),
        hostname: hostname(),
        runtime: `node ${process.version} (oauth-client)`,
        version: VERSION,
      },
    };
    await run(ctx, process.argv.slice(2));
  } finally {
    await database.close();
  }
} catch (error) {
  if (
    error instanceof UsageError ||
    (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
  ) {
    console.error(`${error.message}\n${usage}`);
    process.exit(2);
  }
  const message =
    error instanceof ConfigError || error instanceof DomainError
      ? error.message
      : `oauth-client failed: ${error instanceof Error ? error.message : String(error)}`;
  console.error(message);
  process.exit(1);
}
