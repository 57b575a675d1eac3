import { describe, expect, it } from 'vitest';
import { SubjectReadModel, type Held } from './read-model.js';
import type { SubjectState, SubjectStateRow } from '../../db/repositories/subjects/with-samples.js';

/** A subject's state at a revision (what the read statement hands over with a row it did not leave out). */
function state(id: number, revision: number, note = 'x'): SubjectState {
  const at = new Date('2026-11-26T12:00:00.000Z');
  return {
    row: {
      id,
      subject_id: `s${id}`,
      status: 'ENROLLED',
      metadata: { note },
      template_version: null,
      enrollment_operation_uuid: null,
      created_at: at,
      updated_at: at,
      revision,
    },
    faces: [],
    voices: [],
    templates: [],
  };
}
const full = (id: number, revision: number, note?: string): SubjectStateRow => ({
  id,
  revision,
  state: state(id, revision, note),
  extra: undefined,
});
const leftOut = (id: number, revision: number): SubjectStateRow => ({ id, revision, state: null, extra: undefined });

/** What a read does with its statement's rows (services/subjects/queries.ts): their entries, noted as its answer. */
function settle(model: SubjectReadModel, key: string, rows: SubjectStateRow[], held: Held) {
  const entries = model.entriesOf(rows, held);
  model.answered(key, entries);
  return entries;
}

describe('SubjectReadModel', () => {
  it('holds at most its capacity, least recently used out first', () => {
    const model = new SubjectReadModel(3, 10);
    settle(model, 'page', [full(1, 1), full(2, 2), full(3, 3)], new Map());
    // Subject 1 used again (left out: held at revision 1), then two more arrive: 2 and 3 go, 1 stays.
    settle(model, 'one', [leftOut(1, 1)], model.held('one', [1]));
    settle(model, 'more', [full(4, 4), full(5, 5)], new Map());
    expect(model.size).toBe(3);
    expect([1, 2, 3, 4, 5].map((id) => model.peek(id) !== undefined)).toEqual([true, false, false, true, true]);
    // The reads it remembers are bounded too.
    expect(model.held('page').size).toBe(1);
    for (let i = 0; i < 25; i++) settle(model, `read ${i}`, [leftOut(4, 4)], model.held(`read ${i}`, [4]));
    expect(model.held('page').size).toBe(0);
    expect(model.held('read 24').size).toBe(1);
  });

  it('offers what a read answered last time, and a row left out is answered from what was offered', () => {
    const model = new SubjectReadModel();
    const first = settle(model, 'page', [full(1, 10, 'a'), full(2, 11, 'b')], new Map());
    const held = model.held('page');
    expect([...held.keys()]).toEqual([10, 11]);
    // Subject 2 changed meanwhile (revision 12): it comes with its state, subject 1 is left out.
    const second = settle(model, 'page', [leftOut(1, 10), full(2, 12, 'c')], held);
    expect(second[0]).toBe(first[0]);
    expect(JSON.parse(second[1]!.text('subject')).metadata).toEqual({ note: 'c' });
    expect(model.peek(2)?.revision).toBe(12);
  });

  it('a row left out whose revision was not offered is an error, never an answer from another state', () => {
    const model = new SubjectReadModel();
    settle(model, 'page', [full(1, 10)], new Map());
    expect(() => settle(model, 'page', [leftOut(1, 9)], model.held('page'))).toThrow(/not held/);
    // Nor from another subject's state that happens to be offered.
    expect(() => settle(model, 'x', [leftOut(2, 10)], model.held('page'))).toThrow(/not held/);
  });

  it('keeps the newer state when an older read finishes last', () => {
    const model = new SubjectReadModel();
    settle(model, 'a', [full(1, 20, 'new')], new Map());
    settle(model, 'b', [full(1, 15, 'old')], new Map());
    expect(model.peek(1)?.revision).toBe(20);
  });

  it('makes each answer text once, exactly the stringified presentation', () => {
    const model = new SubjectReadModel();
    const [entry] = settle(model, 'a', [full(1, 1)], new Map());
    const text = entry!.text('multimodal');
    expect(entry!.text('multimodal')).toBe(text);
    expect(text).toBe(JSON.stringify(entry!.present('multimodal')));
  });

  it("keeps a page's text while its answer is made of the same entries, and makes it anew when one changes", () => {
    const model = new SubjectReadModel(10, 10, 1_000);
    const first = settle(model, 'page', [full(1, 1), full(2, 2)], new Map());
    const text = model.pageText('page', 'subject', first);
    expect(JSON.parse(text.text).map((s: { id: number }) => s.id)).toEqual([1, 2]);
    expect(new TextDecoder().decode(text.bytes)).toBe(text.text);
    // The next statement answers a new array of the same entries: the same text, the same bytes.
    const again = settle(model, 'page', [leftOut(1, 1), leftOut(2, 2)], model.held('page'));
    expect(again).not.toBe(first);
    expect(model.pageText('page', 'subject', again)).toBe(text);
    expect(model.pageText('page', 'subject', again).bytes).toBe(text.bytes);
    // Another presentation is another text.
    expect(model.pageText('page', 'multimodal', again)).not.toBe(text);
    // Subject 2 changed: a new text, with the new state in it.
    const changed = settle(model, 'page', [leftOut(1, 1), full(2, 3, 'changed')], model.held('page'));
    const newer = model.pageText('page', 'subject', changed);
    expect(newer).not.toBe(text);
    expect(JSON.parse(newer.text)[1].metadata).toEqual({ note: 'changed' });
    // The same entries in another order are another answer.
    expect(model.pageText('page', 'subject', [changed[1]!, changed[0]!]).text).not.toBe(newer.text);
  });

  it('keeps page texts within its budget of characters, oldest out first', () => {
    const entries = settle(new SubjectReadModel(), 'x', [full(1, 1)], new Map());
    const size = entries[0]!.text('subject').length + 2;
    const model = new SubjectReadModel(10, 10, size * 2);
    const a = model.pageText('a', 'subject', entries);
    model.pageText('b', 'subject', entries);
    expect(model.pageText('a', 'subject', [...entries])).toBe(a);
    model.pageText('c', 'subject', entries);
    // a was the oldest: made anew.
    expect(model.pageText('a', 'subject', [...entries])).not.toBe(a);
  });
});
