// The part of autocannon's programmatic API the load bench uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface RequestContext {
    [key: string]: unknown;
  }
  interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }
  interface AutocannonRequest extends RequestSpec {
    setupRequest?: (request: RequestSpec, context: RequestContext) => RequestSpec;
    onResponse?: (status: number, body: string, context: RequestContext) => void;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    pipelining?: number;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
  }
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }
  interface Result {
    duration: number;
    requests: Histogram & { sent: number };
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    '4xx': number;
    '5xx': number;
  }
  /** A client is one connection; the bench reads the context its last setupRequest filled in. */
  interface Client {
    requestIterator: { context: RequestContext };
  }
  interface Instance extends EventEmitter, PromiseLike<Result> {
    on(
      event: 'response',
      listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void,
    ): this;
    on(event: string, listener: (...args: any[]) => void): this;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
