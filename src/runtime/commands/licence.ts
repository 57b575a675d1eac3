/**
 * `npm run licence -- <command>`: the vendor's tool for development and tests. It makes an Ed25519 key
 * pair, issues licences and dongle updates signed with the private key. The service only ever gets the
 * public key (BIMS_LICENCE_PUBLIC_KEY); keep the private one out of its configuration.
 *
 *   keygen --out DIR
 *       Writes DIR/licence-private.pem (mode 600), DIR/licence-public.pem and DIR/licence-public.jwk.
 *   issue --key PRIVATE.pem --licensee NAME [--id ID] [--source CLOUD|INTERNET|DONGLE] [--modalities FACE,VOICE]
 *         [--quota TYPE:PERIOD:LIMIT]... [--not-before ISO] [--expires ISO | --days N] [--dongle ID] [--out FILE]
 *       Prints (or writes) a licence, a compact JWS. Quotas e.g. --quota ENROLL:MONTH:1000 --quota IDENTIFY:DAY:500.
 *   update --key PRIVATE.pem --dongle ID --sequence N --licence FILE [--out FILE]
 *       Prints (or writes) an update package that puts the licence in FILE on dongle ID. Sequence numbers
 *       must rise with each update of a dongle; each package carries a fresh nonce.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LICENSED_OPERATIONS, QUOTA_PERIODS, type LicenceDocument } from '../../licensing/document.js';
import { generateLicenceKeys, importSigningKey, issueLicence, issueUpdate } from '../../licensing/issue.js';

const usage = `usage: npm run licence -- keygen --out DIR
       npm run licence -- issue --key PRIVATE.pem --licensee NAME [--id ID] [--source CLOUD|INTERNET|DONGLE] [--modalities FACE,VOICE]
                                [--quota TYPE:PERIOD:LIMIT]... [--not-before ISO] [--expires ISO | --days N] [--dongle ID] [--out FILE]
       npm run licence -- update --key PRIVATE.pem --dongle ID --sequence N --licence FILE [--out FILE]`;

class UsageError extends Error {}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

function emit(text: string, out: string | undefined): void {
  if (out) writeFileSync(out, `${text}\n`);
  else console.log(text);
}

function quotasOf(specs: string[]): LicenceDocument['quotas'] {
  const quotas: LicenceDocument['quotas'] = {};
  for (const spec of specs) {
    const [type, period, limit] = spec.split(':');
    if (
      !(LICENSED_OPERATIONS as readonly string[]).includes(type ?? '') ||
      !(QUOTA_PERIODS as readonly string[]).includes(period ?? '') ||
      !/^\d+$/.test(limit ?? '')
    ) {
      throw new UsageError(
        `--quota ${spec}: expected TYPE:PERIOD:LIMIT with TYPE one of ${LICENSED_OPERATIONS.join('|')} and PERIOD one of ${QUOTA_PERIODS.join('|')}`,
      );
    }
    quotas[type as keyof typeof quotas] = { period: period as (typeof QUOTA_PERIODS)[number], limit: Number(limit) };
  }
  return quotas;
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      key: { type: 'string' },
      licensee: { type: 'string' },
      id: { type: 'string' },
      source: { type: 'string', default: 'INTERNET' },
      modalities: { type: 'string', default: 'FACE' },
      quota: { type: 'string', multiple: true, default: [] },
      'not-before': { type: 'string' },
      expires: { type: 'string' },
      days: { type: 'string', default: '365' },
      dongle: { type: 'string' },
      sequence: { type: 'string' },
      licence: { type: 'string' },
    },
  });
  const [command] = positionals;
  if (command === 'keygen') {
    const dir = need(values.out, '--out');
    const keys = await generateLicenceKeys();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'licence-private.pem'), keys.privatePem, { mode: 0o600 });
    chmodSync(join(dir, 'licence-private.pem'), 0o600);
    writeFileSync(join(dir, 'licence-public.pem'), keys.publicPem);
    writeFileSync(join(dir, 'licence-public.jwk'), `${JSON.stringify(keys.publicJwk)}\n`);
    console.log(`Wrote ${dir}/licence-private.pem (keep it secret), licence-public.pem and licence-public.jwk.`);
    console.log(`Give the service: BIMS_LICENCE_PUBLIC_KEY='${JSON.stringify(keys.publicJwk)}'`);
    return;
  }
  const key = await importSigningKey(readFileSync(need(values.key, '--key'), 'utf8'));
  if (command === 'issue') {
    const notBefore = values['not-before'] ? new Date(values['not-before']) : new Date();
    const expiresAt = values.expires
      ? new Date(values.expires)
      : new Date(notBefore.getTime() + Number(values.days) * 86_400_000);
    if (Number.isNaN(notBefore.getTime()) || Number.isNaN(expiresAt.getTime()))
      throw new UsageError('--not-before and --expires must be ISO 8601 dates');
    const jws = await issueLicence(
      {
        licenceId: values.id ?? `LIC-${crypto.randomUUID().slice(0, 8).toUpperCase()}`,
        licensee: need(values.licensee, '--licensee'),
        source: values.source as LicenceDocument['source'],
        modalities: values.modalities.split(',').map((m) => m.trim().toUpperCase()) as LicenceDocument['modalities'],
        quotas: quotasOf(values.quota),
        issuedAt: new Date().toISOString(),
        notBefore: notBefore.toISOString(),
        expiresAt: expiresAt.toISOString(),
        ...(values.dongle ? { dongleId: values.dongle } : {}),
      },
      key,
    );
    emit(jws, values.out);
    return;
  }
  if (command === 'update') {
    const sequence = Number(need(values.sequence, '--sequence'));
    if (!Number.isInteger(sequence) || sequence < 1) throw new UsageError('--sequence must be a positive integer');
    const licence = readFileSync(need(values.licence, '--licence'), 'utf8').trim();
    emit(await issueUpdate({ dongleId: need(values.dongle, '--dongle'), sequence, licence }, key), values.out);
    return;
  }
  throw new UsageError(command ? `unknown command '${command}'` : 'a command is required');
}

run(process.argv.slice(2)).catch((error) => {
  if (error instanceof UsageError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
