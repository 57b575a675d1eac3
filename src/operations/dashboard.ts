import { binary } from '../schemas/common.js';
import { defineOperation, type HttpMethod } from './types.js';

const area = 'Dashboard proxy';
const adminRoot = ['admin', 'root'] as const;
const missing = 'the dashboard component (issue 5)';

/**
 * Seed section 4.6: everything under /dashboard/** is forwarded to the dashboard component, any method,
 * headers and body, so no request part is validated here and the answer is the component's bytes.
 */
function proxy(id: string, method: HttpMethod) {
  return defineOperation({
    id, method, path: '/dashboard/**', surfaces: adminRoot, area,
    summary: `Forwards ${method.toUpperCase()} requests under /dashboard to the dashboard component`,
    description: 'Any request content type and any Accept; the answer is streamed back as the component sent it, without hop-by-hop headers.',
    response: { description: "The dashboard component's answer (bytes)", content: { '*/*': binary } },
    missing,
  });
}

export const dashboardOperations = [
  proxy('proxyDashboard', 'get'),
  proxy('proxyDashboard1', 'post'),
  proxy('proxyDashboard2', 'put'),
  proxy('proxyDashboard3', 'delete'),
  proxy('proxyDashboard4', 'patch'),
];
