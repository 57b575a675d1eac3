import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 answer as read off the wire. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A raw HTTP/1.1 connection (node:net), for what fetch hides: several requests on one keep-alive socket,
 * bodies sent whether or not the server reads them, and how the server ends the connection.
 */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  /** Set once the server ended the connection: 'end' (FIN, clean) or the socket error's code. */
  ended: string | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('end', () => this.finish('end'));
    socket.on('error', (error: NodeJS.ErrnoException) => this.finish(error.code ?? error.message));
    socket.on('close', () => this.finish('close'));
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  private finish(how: string) {
    this.ended ??= how;
    this.wake();
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Write raw bytes; write errors (the server closed early) surface in `ended`, not as throws. */
  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.write(data, () => resolve());
    });
  }

  /** The next complete answer, or null when the connection ends first (or `timeoutMs` passes). */
  async next(timeoutMs = 10_000): Promise<RawAnswer | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answer = this.take();
      if (answer) return answer;
      if (this.ended || Date.now() > deadline) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Wait until the server ends the connection (or `timeoutMs` passes); answers how it ended, or null. */
  async closed(timeoutMs = 5_000): Promise<string | null> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.ended;
  }

  destroy() {
    this.socket.destroy();
  }

  /** Cut one complete answer (Content-Length or chunked) off the front of the buffer. */
  private take(): RawAnswer | null {
    const headEnd = this.buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return null;
    const lines = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    let rest = this.buffer.subarray(headEnd + 4);
    if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = [];
      let at = 0;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        if (lineEnd < 0) return null;
        const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
        if (rest.length < lineEnd + 2 + size + 2) return null;
        if (size === 0) {
          this.buffer = rest.subarray(lineEnd + 4);
          return { status, headers, body: Buffer.concat(parts).toString('utf8') };
        }
        parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < length) return null;
    this.buffer = rest.subarray(length);
    rest = rest.subarray(0, length);
    return { status, headers, body: rest.toString('utf8') };
  }
}
