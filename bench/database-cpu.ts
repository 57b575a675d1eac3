import { readFileSync } from 'node:fs';

/**
 * The CPU time (user + system, ms) PostgreSQL's backends serving one database have used so far, when the server
 * runs on this machine and its processes' /proc entries are readable; undefined otherwise (a remote server). The
 * service's own CPU per request leaves out what its statements cost the database, which is where a cheaper
 * statement shows (`npm run bench -- load` reports it per phase as `dbCpuMsPerRequest`).
 *
 * Backends that end during a phase take their time with them and ones that start count from their start: the
 * figure is for phases whose pool stays open throughout, as the load bench's do.
 */
export function databaseCpu(url: string): () => Promise<number | undefined> {
  const name = new URL(url).pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return async () => {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      );
      let total = 0;
      let read = 0;
      for (const { pid } of rows) {
        try {
          const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
          total += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
          read++;
        } catch {
          // Ended since the query, or not a process of this machine.
        }
      }
      return rows.length > 0 && read === 0 ? undefined : total;
    } finally {
      await client.end();
    }
  };
}

/** The kernel's clock ticks per second (USER_HZ): 100 on Linux. */
const CLOCK_TICKS = 100;
