/**
 * Reads of one kind share a statement that none of them has seen sent.
 *
 * A read that arrives while a statement of its kind (same SQL, same caller) is already running for another read
 * does not take that one's answer: its snapshot may predate a write that committed before this read arrived. It
 * waits for that statement to end and then shares one new statement with every read of its kind that arrived
 * meanwhile, each adding what it asks for (the subjects it names; nothing, for identical reads). Every read so
 * gets the answer of a statement started after it arrived, exactly as if it had sent its own; what is saved is
 * statements, round trips and wake-ups of the database: under a burst of reads (a dashboard polled by many
 * screens, an integration reading subject after subject on several connections) at most two statements of a
 * kind are under way, one running and one gathering.
 *
 * A read that finds nothing of its kind running starts its statement at once, so a lone read waits for nothing.
 * Only for statements that change nothing, outside transactions (a transaction's reads see its own writes).
 */
export class JoinedReads {
  private readonly lines = new Map<string, Line>();

  /** Kinds of read whose statement is running or gathering (tests, diagnostics). */
  get size(): number {
    return this.lines.size;
  }

  /**
   * The answer of `start(asked)` for a read of kind `key` asking `value`: started now with `[value]` if no read of
   * that kind is running; otherwise started when the running one has ended, with the values of every read of the
   * kind that arrived until then, and its answer shared by all of them. `start` must make its statement only when
   * called, from `asked` alone (the start of a read that joins another's statement is never called).
   */
  run<V, T>(key: string, value: V, start: (asked: readonly V[]) => Promise<T>): Promise<T> {
    const line = this.lines.get(key);
    if (!line) {
      const answer = start([value]);
      this.follow(key, { last: answer }, answer);
      return answer;
    }
    if (line.gathering) {
      line.gathering.asked.push(value);
      return line.gathering.answer as Promise<T>;
    }
    const gathering: Gathering = { asked: [value], answer: undefined as unknown as Promise<unknown> };
    gathering.answer = line.last.then(ended, ended).then(() => {
      // From here on an arriving read waits for this statement to end: it is about to be sent.
      line.gathering = undefined;
      return start(gathering.asked as V[]);
    });
    line.gathering = gathering;
    this.follow(key, line, gathering.answer);
    return gathering.answer as Promise<T>;
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
  /** The statement started or gathering last; the next one starts when it has ended. */
  last: Promise<unknown>;
  /** The statement waiting for the running one, which arriving reads join. */
  gathering?: Gathering;
}

interface Gathering {
  asked: unknown[];
  answer: Promise<unknown>;
}

const ended = () => undefined;

/** One per database handle, like the read model (tests run many databases in one process). */
const joined = new WeakMap<object, JoinedReads>();

export function joinedReadsOf(db: object): JoinedReads {
  let reads = joined.get(db);
  if (!reads) joined.set(db, (reads = new JoinedReads()));
  return reads;
}
