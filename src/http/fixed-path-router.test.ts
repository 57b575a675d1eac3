import { TrieRouter } from 'hono/router/trie-router';
import { describe, expect, it } from 'vitest';
import { FixedPathRouter } from './fixed-path-router.js';

/** The same routes in both routers: middleware on every path and under /admin, fixed paths and parameters. */
function routers() {
  const fixed = new FixedPathRouter<string>();
  const trie = new TrieRouter<string>();
  const routes: [string, string, string][] = [
    ['ALL', '*', 'every-request'],
    ['ALL', '/admin/*', 'admin-guard'],
    ['GET', '/health', 'health'],
    ['GET', '/admin/subjects', 'page'],
    ['POST', '/admin/subjects/create', 'create'],
    ['GET', '/admin/subjects/:subjectId', 'get'],
    ['GET', '/admin/subjects/multimodal/:subjectId', 'multimodal'],
    ['GET', '/docs/assets/*', 'asset'],
  ];
  for (const [method, path, handler] of routes) {
    fixed.add(method, path, handler);
    trie.add(method, path, handler);
  }
  return { fixed, trie };
}

const handlers = (result: ReturnType<FixedPathRouter<string>['match']>) =>
  result[0].map(([handler, params]) => [handler, params]);

describe('FixedPathRouter', () => {
  it("matches every path as Hono's trie router does, parameters and middleware included", () => {
    const { fixed, trie } = routers();
    const requests: [string, string][] = [
      ['GET', '/health'],
      ['POST', '/health'],
      ['GET', '/admin/subjects'],
      ['POST', '/admin/subjects/create'],
      ['GET', '/admin/subjects/create'],
      ['GET', '/admin/subjects/s-1'],
      ['GET', '/admin/subjects/multimodal/s-1'],
      ['GET', '/admin/subjects/multimodal'],
      ['GET', '/docs/assets/a.js'],
      ['GET', '/nowhere'],
      ['OPTIONS', '/health'],
    ];
    for (const [method, path] of requests) {
      for (let twice = 0; twice < 2; twice++)
        expect(handlers(fixed.match(method, path)), `${method} ${path}`).toEqual(handlers(trie.match(method, path)));
    }
    expect(handlers(fixed.match('GET', '/admin/subjects/s-1'))).toEqual([
      ['every-request', {}],
      ['admin-guard', {}],
      ['get', { subjectId: 's-1' }],
    ]);
  });

  it('keeps the match of a fixed path, and only of the fixed paths of its routes and the usual methods', () => {
    const { fixed } = routers();
    expect(fixed.match('GET', '/health')).toBe(fixed.match('GET', '/health'));
    expect(fixed.match('POST', '/admin/subjects/create')).toBe(fixed.match('POST', '/admin/subjects/create'));
    // Paths with parameters, paths no route names and unusual methods are matched afresh: nothing a client
    // sends makes the router remember more.
    expect(fixed.match('GET', '/admin/subjects/s-1')).not.toBe(fixed.match('GET', '/admin/subjects/s-1'));
    expect(fixed.match('GET', '/nowhere')).not.toBe(fixed.match('GET', '/nowhere'));
    expect(fixed.match('BREW', '/health')).not.toBe(fixed.match('BREW', '/health'));
  });

  it('forgets what it kept when a route is added', () => {
    const { fixed } = routers();
    expect(handlers(fixed.match('GET', '/health')).map(([h]) => h)).toEqual(['every-request', 'health']);
    fixed.add('GET', '/health', 'second-health');
    expect(handlers(fixed.match('GET', '/health')).map(([h]) => h)).toEqual([
      'every-request',
      'health',
      'second-health',
    ]);
  });
});
