import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBLEM_BASE } from '../http/problem.js';

/**
 * How the Node entry's HTTP server reads request heads. The request line and headers together may be 64 KiB
 * (Node's default is 16 KiB): the bulk downloads name their identifiers in the query string, and 1,000
 * operation UUIDs given as repeated `ids=` are 41 KB (docs/interface.md states the lists' limits from it).
 */
export const HTTP_SERVER_OPTIONS = { maxHeaderSize: 64 * 1024 } as const;

/**
 * Sets up a Node HTTP server of the API as the entry runs it: parser refusals answered as problems
 * ({@link answerClientErrors}), and idle keep-alive connections held `keepAliveSeconds`
 * (BIMS_HTTP_KEEP_ALIVE_SECONDS). With Node's 5 s, a client that sends its next request on a connection idle for
 * almost 5 s (its own limit is taken from the `Keep-Alive: timeout=5` header, less a second) gets a reset when the
 * server's timer fires before the request is read: under load, in 4 runs of 4 of the contract-bounds suite at load
 * 20-24, one request reset in each, none with 65 s. A proxy that keeps connections 60 s meets the same reset.
 */
export function prepareHttpServer(server: Server, keepAliveSeconds: number): void {
  answerClientErrors(server);
  server.keepAliveTimeout = keepAliveSeconds * 1000;
}

/**
 * Answer what Node's HTTP parser refuses before any route sees it with a problem+json like every other
 * answer, not Node's bare status line: a head over {@link HTTP_SERVER_OPTIONS} (431, which Node answered with
 * an empty body), a malformed request (400), a head that did not arrive in time (408). The connection is
 * closed after the answer, as the parser cannot go on with it.
 */
function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [status, title, detail] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431,
            'Request Header Fields Too Large',
            `The request line and headers exceed ${HTTP_SERVER_OPTIONS.maxHeaderSize} bytes; name fewer identifiers in the query string`,
          ]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'The request head did not arrive in time']
          : [400, 'Bad Request', 'The request is not well-formed HTTP/1.1'];
    const type =
      status === 431 ? 'request-header-fields-too-large' : status === 408 ? 'request-timeout' : 'bad-request';
    const body = JSON.stringify({ type: `${PROBLEM_BASE}/${type}`, title, status, detail });
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
