/**
 * Operations whose answer depends on a component outside this process. The security suites boot the
 * service with no sidecar (and so no Janus, no dongle) and no dashboard component, so these operations may
 * answer the documented "component unavailable" problems; every other operation answering 5xx is a bug.
 * Listed by name, on purpose: a new operation that starts answering 503 must be added here consciously.
 */
const gateway = [
  'createGatewayConnection',
  'attachToGatewayConnection',
  'createAndAttach',
  'connectToGateway',
  'trickleGateway',
  'stopGatewayConnection',
  'getInfo',
  'getListSession',
  'getSession',
  'getSessionRaw',
  'getStatus',
  'setSettings',
];
/** The licensing operations that ask the sidecar about the dongle. */
const sidecar = ['getDongles', 'generateDongleDump', 'updateDongle', 'getUpdateStatus'];
const dashboard = ['proxyDashboard', 'proxyDashboard1', 'proxyDashboard2', 'proxyDashboard3', 'proxyDashboard4'];

export const externalOperations: ReadonlySet<string> = new Set([...gateway, ...sidecar, ...dashboard]);

/**
 * The problem types (last segment) an external operation may answer with a 5xx status: the component is
 * down (503) or failed (502); the dashboard proxy is still 501 until its component is built.
 */
export const componentProblems: Readonly<Record<number, string>> = {
  501: 'not-implemented',
  502: 'bad-gateway',
  503: 'service-unavailable',
};

/**
 * Where the sidecar is said to be: port 9 (discard) on loopback, where nothing of ours listens, so a
 * sidecar that another process on this machine started can never answer the suite's requests.
 */
export const NO_SIDECAR_ENV: Record<string, string> = {
  BIMS_SIDECAR_URL: 'http://127.0.0.1:9',
  BIMS_SIDECAR_TOKEN: 'x'.repeat(40),
};
