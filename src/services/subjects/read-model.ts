import type { SubjectState, SubjectStateRow } from '../../db/repositories/subjects/with-samples.js';
import { presentMultimodalSubject, presentSubject, type SubjectSamples } from './present.js';
import { JsonText } from '../../encoding/json-text.js';

/**
 * The subject read model: per process and database, the states of the subjects this node answered lately (at
 * most {@link DEFAULT_CAPACITY}, least recently used first out), each with its answers' JSON text made once.
 *
 * Exact on every node without any message between them: a read's statement is told which revisions this node
 * holds for the rows it expects (`known`), and leaves out the state of exactly the rows whose revision is one of
 * them; every other row comes with its state. A revision names one committed state of one subject (migration
 * 0010: one global sequence, never reused, moved in the same transaction as any change of the subject row, its
 * samples or its templates), so a row left out is one whose state this node holds, as of the read's own snapshot.
 * A revision seen only inside a transaction that later rolled back is never seen again, so holding it is harmless.
 */

export type Presentation = 'subject' | 'multimodal';

/** Subjects held per process and database. 20,000 subjects with a few samples each are some tens of MB. */
const DEFAULT_CAPACITY = 20_000;
/** Reads (a page with its filters, a subject by a name) whose answered subjects are remembered. */
const DEFAULT_READS = 4_096;
/** The characters of page texts kept ({@link SubjectReadModel.pageText}): a few hundred pages of 20, a dozen MB. */
const DEFAULT_PAGE_CHARACTERS = 4_000_000;

/** One subject's state and its answers, made when first asked for. Never changed once made. */
export class SubjectEntry {
  private texts: Partial<Record<Presentation, JsonText>> = {};

  constructor(readonly state: SubjectState) {}

  get id(): number {
    return this.state.row.id;
  }

  get revision(): number {
    return this.state.row.revision;
  }

  /** The samples in the presenters' form: a subject without samples of a kind has no entry for it. */
  private samples(): SubjectSamples {
    const { row, faces, voices, templates } = this.state;
    const samples: SubjectSamples = { faces: new Map(), voices: new Map(), templates: new Map() };
    if (faces.length) samples.faces.set(row.id, faces);
    if (voices.length) samples.voices.set(row.id, voices);
    if (templates.length) samples.templates.set(row.id, templates);
    return samples;
  }

  /** The answer as an object of its own (a caller may keep or change it). */
  present(as: 'subject'): ReturnType<typeof presentSubject>;
  present(as: 'multimodal'): ReturnType<typeof presentMultimodalSubject>;
  present(as: Presentation): ReturnType<typeof presentSubject> | ReturnType<typeof presentMultimodalSubject>;
  present(as: Presentation) {
    return as === 'subject'
      ? presentSubject(this.state.row, this.samples())
      : presentMultimodalSubject(this.state.row, this.samples());
  }

  /** The answer's JSON text, exactly what `JSON.stringify` makes of {@link present}, made once. */
  text(as: Presentation): string {
    return this.json(as).text;
  }

  /** {@link text} with its bytes, as the answer goes out (made once, encoded once). */
  json(as: Presentation): JsonText {
    return (this.texts[as] ??= new JsonText(JSON.stringify(this.present(as))));
  }
}

/** The held states a read may leave out, by revision (taken before the read, so an eviction meanwhile loses nothing). */
export type Held = ReadonlyMap<number, SubjectEntry>;

export class SubjectReadModel {
  private readonly entries = new Map<number, SubjectEntry>();
  /** Per read, the subjects it answered last time: what the next same read most likely answers again. */
  private readonly answeredBy = new Map<string, readonly number[]>();
  /**
   * PGlite only: whole answers of reads, each exact while the database's write generation is the one it was made at
   * (db/write-generation.ts). One generation for all: a write makes every one of them unusable, so they are
   * dropped at the next {@link remember} and never hold more than the answers of one generation.
   */
  private readonly answers = new Map<string, readonly SubjectEntry[]>();
  private answersGeneration = -1;
  /**
   * Per page read and presentation, its last answer's subjects and JSON text ({@link pageText}), oldest first, at
   * most {@link pageCharacters} characters of text in all.
   */
  private readonly pages = new Map<string, { entries: readonly SubjectEntry[]; json: JsonText }>();
  private pagesCharacters = 0;

  constructor(
    readonly capacity = DEFAULT_CAPACITY,
    readonly reads = DEFAULT_READS,
    readonly pageCharacters = DEFAULT_PAGE_CHARACTERS,
  ) {}

  /** How many subjects are held. */
  get size(): number {
    return this.entries.size;
  }

  /** The held state of subject `id`, if any (tests, diagnostics). */
  peek(id: number): SubjectEntry | undefined {
    return this.entries.get(id);
  }

  /**
   * What the read `key` may leave out: the held states of the subjects it answered last time, and of `ids`
   * (a read by id knows its subject). At most a page's worth, so the statement's parameter stays small.
   */
  held(key: string, ids: readonly number[] = []): Held {
    const held = new Map<number, SubjectEntry>();
    const add = (id: number) => {
      const entry = this.entries.get(id);
      if (entry) held.set(entry.revision, entry);
    };
    for (const id of this.answeredBy.get(key) ?? []) add(id);
    for (const id of ids) add(id);
    return held;
  }

  /**
   * The entries of a statement's rows, in its order: a row that came without its state is the held entry of its
   * revision; a row with its state becomes a new entry, held from now on. Which read they answer is noted apart
   * ({@link answered}), since a statement may be shared by several reads (db/joined-reads.ts).
   */
  entriesOf(rows: readonly SubjectStateRow[], held: Held): SubjectEntry[] {
    return rows.map((r) => {
      if (r.state) return this.hold(new SubjectEntry(r.state));
      const entry = held.get(r.revision);
      // The statement leaves a state out only for a revision it was given, and revisions name one subject each.
      if (!entry || entry.id !== r.id)
        throw new Error(`subject ${r.id} came without its state but revision ${r.revision} is not held`);
      if (this.entries.get(entry.id) === entry) this.touch(entry);
      return entry;
    });
  }

  /** Note that read `key` answered `entries`: what it will most likely answer next time ({@link held}). */
  answered(key: string, entries: readonly SubjectEntry[]): void {
    // Every read sharing a statement notes the same subjects: the first one's note serves them all. (It keeps its
    // place among the reads, oldest out first: one forgotten costs its next statement the states it would skip.)
    const last = this.answeredBy.get(key);
    if (last && last.length === entries.length && entries.every((e, i) => e.id === last[i])) return;
    this.answeredBy.delete(key);
    this.answeredBy.set(
      key,
      entries.map((e) => e.id),
    );
    if (this.answeredBy.size > this.reads) this.answeredBy.delete(this.answeredBy.keys().next().value!);
  }

  /** The whole answer of read `key` as it was at write generation `generation`, if remembered then. */
  recall(key: string, generation: number): readonly SubjectEntry[] | undefined {
    return generation === this.answersGeneration ? this.answers.get(key) : undefined;
  }

  /** Remember read `key`'s whole answer, made by a statement that no write preceded or followed within `generation`. */
  remember(key: string, generation: number, entries: readonly SubjectEntry[]): void {
    if (generation < this.answersGeneration) return;
    if (generation !== this.answersGeneration) {
      this.answers.clear();
      this.answersGeneration = generation;
    }
    this.answers.delete(key);
    this.answers.set(key, entries);
    if (this.answers.size > this.reads) this.answers.delete(this.answers.keys().next().value!);
  }

  /**
   * The JSON text of page read `key` answering `entries`: the text of its last answer when that was made of the very
   * same entries, in the same order (an entry is one state of one subject and never changes, so the text is the
   * same), else made now. Each statement answers a new array, so without this every statement joined its page's
   * subjects' texts into a new text of some kilobytes, and every request encoded it to UTF-8 again; now a page that
   * did not change goes out as the same bytes.
   */
  pageText(key: string, as: Presentation, entries: readonly SubjectEntry[]): JsonText {
    const name = `${as}\n${key}`;
    const last = this.pages.get(name);
    if (last && sameEntries(last.entries, entries)) return last.json;
    const json = pageJson(entries, as);
    if (last) this.pagesCharacters -= last.json.text.length;
    this.pages.delete(name);
    this.pages.set(name, { entries, json });
    this.pagesCharacters += json.text.length;
    for (const [oldest, page] of this.pages) {
      if (this.pagesCharacters <= this.pageCharacters || oldest === name) break;
      this.pages.delete(oldest);
      this.pagesCharacters -= page.json.text.length;
    }
    return json;
  }

  /** Hold `entry`, unless a newer state of its subject is held already (a slower read of an older snapshot). */
  private hold(entry: SubjectEntry): SubjectEntry {
    const current = this.entries.get(entry.id);
    if (current && current.revision > entry.revision) return entry;
    this.touch(entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }

  /** Most recently used last. */
  private touch(entry: SubjectEntry): void {
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
  }
}

/** A page's answer: its subjects' texts in order, as one JSON array. */
export function pageJson(entries: readonly SubjectEntry[], as: Presentation): JsonText {
  return new JsonText(`[${entries.map((e) => e.text(as)).join(',')}]`);
}

function sameEntries(a: readonly SubjectEntry[], b: readonly SubjectEntry[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** One read model per database handle (tests run many databases in one process; revisions are per database). */
const models = new WeakMap<object, SubjectReadModel>();

export function readModelOf(db: object): SubjectReadModel {
  let model = models.get(db);
  if (!model) models.set(db, (model = new SubjectReadModel()));
  return model;
}
