// The ratio baseline of `npm run bench -- load`: a bare Hono hello-world on @hono/node-server, the same
// server stack BIMS runs on, with nothing of BIMS. Started as its own process by bench/load.ts; prints
// `listening <url>` once it accepts connections (port 0: the kernel picks a free one).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/', (c) => c.text('Hello Hono!'));
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  console.log(`listening http://127.0.0.1:${info.port}`),
);
