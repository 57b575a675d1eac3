import { binary } from '../schemas/common.js';
import { forwardToDashboard } from '../services/dashboard-proxy/forward.js';
import { streamAdmissionOf } from '../services/dashboard-proxy/stream-admission.js';
import { defineOperation, passedThrough, type HttpMethod } from './types.js';

const area = 'Dashboard proxy';
const adminRoot = ['admin', 'root'] as const;

/**
 * Why GET needs no credentials: a browser navigating to /dashboard/ cannot attach a Bearer token, and what
 * the component serves on GET is the application shell (HTML, scripts, styles) holding no data. The page
 * signs in and calls the API with a token; each of those calls is authorised by its own scope.
 */
const openGet =
  'a browser must be able to load the dashboard (its pages, scripts and styles hold no data) before it can sign in; every datum the page shows comes from API calls made with a Bearer token and authorised by their own scope. Authorization headers sent anyway are forwarded to the component.';

/**
 * Seed section 4.6: everything under /dashboard/** is forwarded to the dashboard component, any method,
 * headers and body, so no request part is validated here and the answer is the component's bytes. GET is
 * open (see above); POST, PUT, DELETE and PATCH keep the surface's scope (ADMIN), because the proxy cannot
 * know what a component reached through DASHBOARD_URL changes, and the built-in dashboard needs none of them.
 */
function proxy(id: string, method: HttpMethod) {
  return defineOperation({
    id,
    method,
    path: '/dashboard/**',
    surfaces: adminRoot,
    area,
    summary:
      method === 'get'
        ? 'Forwards GET requests under /dashboard to the dashboard component'
        : `Forwards ${method.toUpperCase()} requests under /dashboard to the dashboard component (the built-in one answers 405)`,
    description:
      (method === 'get'
        ? ''
        : `The built-in dashboard serves files with GET only: to ${method.toUpperCase()} it answers 405 problem+json with Allow: GET, HEAD, passed through. ` +
          'Only a component of your own behind DASHBOARD_URL may take this method. ') +
      'Any request content type and any Accept; the answer is streamed back as the component sent it, without hop-by-hop headers. ' +
      'The component receives the full path (/dashboard/... or /admin/dashboard/...) and X-Forwarded-For, -Host, -Proto and -Prefix. ' +
      'A component that is down or silent beyond BIMS_DASHBOARD_TIMEOUT_MS: 502 problem+json. ' +
      'An event stream (text/event-stream answer) is admitted only while its address holds fewer than BIMS_STREAMS_PER_ADDRESS (429 otherwise) ' +
      'and the process fewer than BIMS_STREAMS_TOTAL (503 otherwise), both problem+json with Retry-After.',
    response: { description: "The dashboard component's answer (bytes)", content: { '*/*': binary } },
    problems: {
      405: "The component's own answer for a method it does not take, passed through (the built-in dashboard's to every method but GET and HEAD, with Allow: GET, HEAD)",
      429: 'An event stream refused: this address already holds as many as it may',
      502: 'The dashboard component is down or did not start answering in time',
      503: 'An event stream refused: the process holds as many as it may',
    },
    ...(method === 'get' ? { open: openGet } : {}),
    handle: async ({ request, services, clientAddress }) => {
      const { config } = services.ctx;
      const streams = streamAdmissionOf(services.ctx, {
        perAddress: config.BIMS_STREAMS_PER_ADDRESS,
        total: config.BIMS_STREAMS_TOTAL,
      });
      return passedThrough(await forwardToDashboard(request, { config, clientAddress, streams }));
    },
  });
}

export const dashboardOperations = [
  proxy('proxyDashboard', 'get'),
  proxy('proxyDashboard1', 'post'),
  proxy('proxyDashboard2', 'put'),
  proxy('proxyDashboard3', 'delete'),
  proxy('proxyDashboard4', 'patch'),
];
