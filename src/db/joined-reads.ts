/**
 * Identical reads share a statement that none of them has seen sent.
 *
 * A read that arrives while the same statement (same SQL, same values) is already running for another caller
 * does not take that one's answer: its snapshot may predate a write that committed before this read arrived.
 * It waits for it to end and then shares one new statement with every identical read that arrived meanwhile.
 * Every read so gets the answer of a statement started after it arrived, exactly as if it had sent its own;
 * what is saved is the statements: under a burst of the same read (a dashboard polled by many screens, one
 * integration's client paging the same list) at most two are under way, one running and one waiting.
 *
 * A read that finds nothing running starts its statement at once, so a lone read waits for nothing. Only for
 * statements that change nothing, outside transactions (a transaction's reads see its own writes).
 */
export class JoinedReads {
  private readonly lines = new Map<string, Line>();

  /** Reads whose statement is running or waiting to (tests, diagnostics). */
  get size(): number {
    return this.lines.size;
  }

  /**
   * The answer of `start()` for read `key`, started now if no read of that key is running; otherwise the answer
   * of the one statement started when the running one has ended, shared by every read of that key arriving until
   * then. `start` must make the statement only when called: it is not called at all for a read that joins.
   */
  run<T>(key: string, start: () => Promise<T>): Promise<T> {
    const line = this.lines.get(key);
    if (!line) {
      const answer = start();
      this.follow(key, { last: answer }, answer);
      return answer;
    }
    if (line.next) return line.next as Promise<T>;
    const answer = line.last.then(ended, ended).then(() => {
      // From here on an arriving read waits for this statement to end: it is about to be sent.
      line.next = undefined;
      return start();
    });
    line.next = answer;
    this.follow(key, line, answer);
    return answer;
  }

  /** Make `answer` the line's last statement; the line is gone once its last statement has ended. */
  private follow(key: string, line: Line, answer: Promise<unknown>): void {
    line.last = answer;
    this.lines.set(key, line);
    answer.then(ended, ended).then(() => {
      if (line.last === answer) this.lines.delete(key);
    });
  }
}

interface Line {
  /** The statement started or waiting last; the next one starts when it has ended. */
  last: Promise<unknown>;
  /** The statement waiting for the running one, which arriving reads join. */
  next?: Promise<unknown>;
}

const ended = () => undefined;

/** One per database handle, like the read model (tests run many databases in one process). */
const joined = new WeakMap<object, JoinedReads>();

export function joinedReadsOf(db: object): JoinedReads {
  let reads = joined.get(db);
  if (!reads) joined.set(db, (reads = new JoinedReads()));
  return reads;
}
