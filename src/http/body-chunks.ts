import { DomainError } from '../services/errors.js';
import { bodyLimitError } from './body-limit.js';

/** Largest piece of a body handled in one go: a chunk a caller handed over whole is cut to this. */
const PIECE_BYTES = 64 * 1024;
/**
 * Bytes of bodies handled per turn of the event loop, all requests together: 256 KiB of scanning, base64
 * decoding or copying is about a millisecond, so `/health` and every other request wait at most about that
 * long behind the bodies being read, however many arrive at once.
 */
const BYTES_PER_TURN = 256 * 1024;

let spent = 0;
let turnScheduled = false;
const waiting: (() => void)[] = [];

/**
 * Wait until `bytes` more of body work fits in this turn's budget. Readers wait in turn (first come, first
 * served), and each new turn lets the next ones through until the budget is spent: a reader of ten never gets
 * more than its share, and the work of ten readers is not done back to back in one turn.
 */
function paced(bytes: number): Promise<void> | undefined {
  if (waiting.length === 0 && spent < BYTES_PER_TURN) {
    spent += bytes;
    scheduleTurn();
    return undefined;
  }
  return new Promise<void>((resolve) =>
    waiting.push(() => {
      spent += bytes;
      resolve();
    }),
  );
}

function scheduleTurn() {
  if (turnScheduled) return;
  turnScheduled = true;
  // A timer, not a microtask: the loop polls sockets (answers `/health`) before it runs.
  setTimeout(nextTurn, 0);
}

function nextTurn() {
  turnScheduled = false;
  spent = 0;
  while (waiting.length > 0 && spent < BYTES_PER_TURN) waiting.shift()!();
  if (waiting.length > 0 || spent > 0) scheduleTurn();
}

/**
 * The chunks of a request body, for readers that work on each as it comes (the JSON and multipart readers),
 * so that a large body is never handled in one long turn of the event loop: pieces of at most 64 KiB, each
 * taken only when it fits in the turn's budget ({@link paced}). Chunks from a socket wait for the network
 * anyway; the pacing matters when bodies are already in memory (given whole, or queued up while the server was
 * busy), and when many arrive at once.
 *
 * @throws the 413 of the body limit when the count passes it while reading; a 400 naming `body` when the
 * body cannot be read (the client went away).
 */
export async function* bodyChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array, void, undefined> {
  const reader = body.getReader();
  let ended = false;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        throw bodyLimitError(error) ?? unreadable();
      }
      if (next.done) {
        ended = true;
        return;
      }
      const chunk = next.value;
      for (let at = 0; at < chunk.length; at += PIECE_BYTES) {
        const piece = chunk.length <= PIECE_BYTES ? chunk : chunk.subarray(at, at + PIECE_BYTES);
        await paced(piece.length);
        yield piece;
      }
    }
  } finally {
    if (ended) reader.releaseLock();
    else {
      // Stopped early (a refusal on the way): nobody wants the rest, and the connection is closed after the
      // answer (unread-body.ts), since the next request on it would start inside this body.
      partlyRead.add(body);
      void reader.cancel().catch(() => {});
    }
  }
}

/** Bodies whose reader stopped before their end. */
export const partlyRead = new WeakSet<ReadableStream<Uint8Array>>();

/** The pieces joined into one array, copied a piece at a time within the turns' budget. */
export async function joinPaced(pieces: readonly Uint8Array[], size: number): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    for (let from = 0; from < piece.length && at < size; from += PIECE_BYTES) {
      const part = piece.subarray(from, Math.min(piece.length, from + PIECE_BYTES, from + size - at));
      await paced(part.length);
      out.set(part, at);
      at += part.length;
    }
  }
  return out;
}

const unreadable = () =>
  new DomainError('validation', 'body could not be read', {
    errors: [{ field: 'body', message: 'could not be read' }],
  });
