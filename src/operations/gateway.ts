import {
  ConnectData,
  GatewayAdminGetStatusResponse,
  GatewayAdminSessionResponse,
  GatewayInfo,
  GatewayPluginQuery,
  GatewayRaw,
  GatewayResponse,
  GatewaySettingsRequest,
  SessionData,
  SessionQuery,
  TrickleData,
} from '../schemas/gateway.js';
import { defineOperation } from './types.js';

const area = 'Media gateway';
const component = 'The media gateway';
const adminRoot = ['admin', 'root'] as const;
const all = ['admin', 'root', 'user'] as const;

/** Whose session (docs/media-gateway.md): what every operation that names a session says. */
const OWNED =
  ' A session belongs to the account that made it: on /user and the root surface, one made by another account answers 404 exactly as an unknown id does; on /admin any session may be named.';
const SIGN_IN_429 = 'Too many failed sign-ins (Basic)';
/** The 404 of every operation that names a session or a handle. */
const NOT_FOUND_SESSION = {
  404: "No such session or handle, or one another account made (Janus's 458 or 459 in `gatewayError`)",
};
/** The fair share of gateway sessions (BIMS_GATEWAY_SESSIONS_PER_ACCOUNT, BIMS_GATEWAY_SESSIONS_TOTAL). */
const SESSION_SHARE = {
  429: `${SIGN_IN_429}; or this account holds BIMS_GATEWAY_SESSIONS_PER_ACCOUNT gateway sessions, or holds some while only the places kept for accounts holding none are left; retry after Retry-After`,
  503: 'The media gateway cannot be reached now, or all BIMS_GATEWAY_SESSIONS_TOTAL gateway sessions are in use (Retry-After)',
};

/** Seed section 4.7: real-time media sessions on the Janus gateway the sidecar supervises. */
export const gatewayOperations = [
  defineOperation({
    id: 'createGatewayConnection',
    method: 'post',
    path: '/gateway/create',
    surfaces: all,
    area,
    component,
    summary: 'Creates a gateway connection',
    description:
      'Creates a gateway session, kept alive while its client calls or a PeerConnection on it is up; `data.id` of the answer is the sessionId. The session is the calling account\'s; an account holds at most BIMS_GATEWAY_SESSIONS_PER_ACCOUNT at once, and the last places of the service\'s BIMS_GATEWAY_SESSIONS_TOTAL are kept for accounts that hold none (docs/media-gateway.md, "Fair share").',
    response: { description: "The gateway's answer", schema: GatewayResponse },
    problems: SESSION_SHARE,
    handle: async ({ services, principal, surface }) => services.gateway.create({ principal, surface }),
  }),
  defineOperation({
    id: 'attachToGatewayConnection',
    method: 'post',
    path: '/gateway/attach',
    surfaces: all,
    area,
    component,
    summary: 'Attaches to a gateway connection',
    description: `Attaches a plugin to a session (\`?plugin=\`, the configured default otherwise: the echo test); \`data.id\` of the answer is the handleId. A session takes at most BIMS_GATEWAY_HANDLES_PER_SESSION handles.${OWNED}`,
    request: { body: SessionData, query: GatewayPluginQuery },
    response: { description: "The gateway's answer", schema: GatewayResponse },
    problems: {
      ...NOT_FOUND_SESSION,
      429: `${SIGN_IN_429}; or the session already has BIMS_GATEWAY_HANDLES_PER_SESSION handles; retry after Retry-After`,
    },
    handle: async ({ services, body, query, principal, surface }) =>
      services.gateway.attach({ principal, surface }, body.sessionId, query.plugin),
  }),
  defineOperation({
    id: 'createAndAttach',
    method: 'post',
    path: '/gateway/create-and-attach',
    surfaces: all,
    area,
    component,
    summary: 'Creates and attaches to a session',
    description:
      "Both steps in one call; the answer carries `session_id` and, as `data.id`, the handleId. The session is the calling account's, under createGatewayConnection's caps.",
    request: { query: GatewayPluginQuery },
    response: { description: "The gateway's answer", schema: GatewayResponse },
    problems: SESSION_SHARE,
    handle: async ({ services, query, principal, surface }) =>
      services.gateway.createAndAttach({ principal, surface }, query.plugin),
  }),
  defineOperation({
    id: 'connectToGateway',
    method: 'post',
    path: '/gateway/connect',
    surfaces: all,
    area,
    component,
    summary: 'Connects to a session',
    description:
      "Sends the JSEP offer with the init params of the session (FVInitParams for face, MultimodalInitParams for face and voice, or their Advanced forms with per-session overrides) and answers with the plugin's event carrying the JSEP answer. On a handle of janus.plugin.videoroom this starts a biometric capture session: the camera is published, its frames analysed, and the operation the params name runs on the best frames; its events (guidance, then DONE with the status, score and operation UUID, or TIMEOUT) are read by trickling to the handle (trickleGateway; getSession on /admin). Invalid params are a 400 before any media flows. The answer then carries `capture` with the STARTED event, whose `framesPerSecond` is the rate the session's frames are analysed at (its params' value or the default): the client need not send more, and the SDK sets its video sender's maxFramerate to it (frames sent faster are dropped by the service, by their timestamps). A capture is admitted only while its account runs fewer than BIMS_CAPTURES_PER_ACCOUNT unfinished captures and the service fewer than BIMS_CAPTURES_TOTAL (the last places kept for accounts running none); one that sees nobody for BIMS_CAPTURE_IDLE_SECONDS ends (TIMEOUT), and one whose frames are refused for one reason for BIMS_CAPTURE_PATIENCE_SECONDS ends with that reason (DONE with QUALITY_CHECK_FAILED or LIVENESS_CHECK_FAILED, `reason` a code such as TOO_DARK and `text` its words; CaptureEvent). The echo test plugin is told to echo audio and video." +
      OWNED,
    request: { body: ConnectData },
    response: {
      description:
        "The gateway's answer with the JSEP answer (and, for a capture session, `capture` with its first events)",
      schema: GatewayResponse,
    },
    problems: {
      ...NOT_FOUND_SESSION,
      429: `${SIGN_IN_429}; or this account runs BIMS_CAPTURES_PER_ACCOUNT unfinished captures, or runs some while only the places kept for accounts running none are left; retry after Retry-After`,
      503: 'The media gateway cannot be reached now, or all BIMS_CAPTURES_TOTAL captures of the service are running (Retry-After)',
    },
    handle: async ({ services, body, principal, surface }) =>
      services.gateway.connect(body, { services, caller: { principal, surface } }),
  }),
  defineOperation({
    id: 'trickleGateway',
    method: 'post',
    path: '/gateway/trickle',
    surfaces: all,
    area,
    component,
    summary: 'Sends trickle data to the gateway',
    description:
      "Forwards ICE candidates (or their end) to the handle's PeerConnection. On the handle of a biometric capture session the answer also carries `capture`: its state, its events so far and its outcome, so that a client on any surface follows its capture by trickling (`completed: true` again is harmless); once the capture is over nothing is forwarded. Every node of a cluster answers it alike (it is read from the database) (docs/gateway-capture.md)." +
      OWNED,
    request: { body: TrickleData },
    response: {
      description: "The gateway's acknowledgement (with `capture` on a capture session's handle)",
      schema: GatewayResponse,
    },
    problems: NOT_FOUND_SESSION,
    handle: async ({ services, body, principal, surface }) => {
      const { sessionId, handleId, candidate, candidates } = body;
      return services.gateway.trickle(
        { principal, surface },
        sessionId,
        handleId,
        candidate ? { candidate } : candidates ? { candidates } : { completed: true },
      );
    },
  }),
  defineOperation({
    id: 'stopGatewayConnection',
    method: 'post',
    path: '/gateway/stop',
    surfaces: all,
    area,
    component,
    summary: 'Stops an active session',
    description: `Hangs up and detaches the handle (when given), then destroys the session; its capture, if any, ends without an operation.${OWNED}`,
    request: { body: SessionData },
    response: { description: "The gateway's answer", schema: GatewayResponse },
    problems: NOT_FOUND_SESSION,
    handle: async ({ services, body, principal, surface }) =>
      services.gateway.stop({ principal, surface }, body.sessionId, body.handleId),
  }),
  defineOperation({
    id: 'getInfo',
    method: 'get',
    path: '/gateway/info',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Information about the gateway server',
    response: { description: 'The gateway server info (name, version, plugins, transports)', schema: GatewayInfo },
    handle: async ({ services }) => services.gateway.inspect.info(),
  }),
  defineOperation({
    id: 'getListSession',
    method: 'get',
    path: '/gateway/list-sessions',
    surfaces: adminRoot,
    area,
    component,
    summary: 'List of current sessions',
    description:
      'Every session of the gateway on /admin; on the root surface only the sessions the calling account made (docs/media-gateway.md).',
    response: { description: 'The live sessions', schema: GatewayAdminSessionResponse },
    handle: async ({ services, principal, surface }) => services.gateway.inspect.listSessions({ principal, surface }),
  }),
  defineOperation({
    id: 'getSession',
    method: 'get',
    path: '/gateway/session',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Information about a session',
    description: `The session's handles from the Admin API, with the events this service saw and its capture's.${OWNED}`,
    request: { query: SessionQuery },
    response: {
      description:
        'The handles of the session (or the info of one handle), the events the service received for it (webrtcup, media, hangup ...) and those of its capture session (plugindata.plugin "bims.capture"), and the handles whose PeerConnection is up',
      schema: GatewayAdminSessionResponse,
    },
    problems: NOT_FOUND_SESSION,
    handle: async ({ services, query, principal, surface }) =>
      services.gateway.inspect.session({ principal, surface }, query.sessionId, query.handleId),
  }),
  defineOperation({
    id: 'getSessionRaw',
    method: 'get',
    path: '/gateway/session-raw',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Raw information about a session',
    description: `The Admin API's answer about the session (or one handle), untouched.${OWNED}`,
    request: { query: SessionQuery },
    response: { description: 'The Admin API answer as the gateway sent it', schema: GatewayRaw },
    problems: NOT_FOUND_SESSION,
    handle: async ({ services, query, principal, surface }) =>
      services.gateway.inspect.sessionRaw({ principal, surface }, query.sessionId, query.handleId),
  }),
  defineOperation({
    id: 'getStatus',
    method: 'get',
    path: '/gateway/get-status',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Raw information about a session (as described)',
    description: "The seed's purpose text repeats getSessionRaw's; this answers the gateway's Admin API get_status.",
    response: { description: "The gateway's status", schema: GatewayAdminGetStatusResponse },
    handle: async ({ services }) => services.gateway.inspect.status(),
  }),
  defineOperation({
    id: 'setSettings',
    method: 'post',
    path: '/gateway/settings',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Sets gateway settings',
    description:
      'Changes gateway settings through its Admin API (log level, session timeout, NACK queue, timers, debugging).',
    request: { body: GatewaySettingsRequest },
    response: { description: "The gateway's status after the change", schema: GatewayAdminGetStatusResponse },
    handle: async ({ services, body }) => services.gateway.inspect.settings(body),
  }),
];
