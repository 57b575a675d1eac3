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
      'Creates a gateway session, kept alive while its client calls or a PeerConnection on it is up; `data.id` of the answer is the sessionId.',
    response: { description: "The gateway's answer", schema: GatewayResponse },
    handle: async ({ services }) => services.gateway.create(),
  }),
  defineOperation({
    id: 'attachToGatewayConnection',
    method: 'post',
    path: '/gateway/attach',
    surfaces: all,
    area,
    component,
    summary: 'Attaches to a gateway connection',
    description:
      'Attaches a plugin to a session (`?plugin=`, the configured default otherwise: the echo test); `data.id` of the answer is the handleId.',
    request: { body: SessionData, query: GatewayPluginQuery },
    response: { description: "The gateway's answer", schema: GatewayResponse },
    handle: async ({ services, body, query }) => services.gateway.attach(body.sessionId, query.plugin),
  }),
  defineOperation({
    id: 'createAndAttach',
    method: 'post',
    path: '/gateway/create-and-attach',
    surfaces: all,
    area,
    component,
    summary: 'Creates and attaches to a session',
    description: 'Both steps in one call; the answer carries `session_id` and, as `data.id`, the handleId.',
    request: { query: GatewayPluginQuery },
    response: { description: "The gateway's answer", schema: GatewayResponse },
    handle: async ({ services, query }) => services.gateway.createAndAttach(query.plugin),
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
      "Sends the JSEP offer with the init params of the session (FVInitParams for face, MultimodalInitParams for face and voice, or their Advanced forms with per-session overrides) and answers with the plugin's event carrying the JSEP answer. On a handle of janus.plugin.videoroom this starts a biometric capture session: the camera is published, its frames analysed, and the operation the params name runs on the best frames; its events (guidance, then DONE with the status, score and operation UUID, or TIMEOUT) are read with getSession (docs/gateway-capture.md). Invalid params are a 400 before any media flows. The echo test plugin is told to echo audio and video.",
    request: { body: ConnectData },
    response: {
      description:
        "The gateway's answer with the JSEP answer (and, for a capture session, `capture` with its first events)",
      schema: GatewayResponse,
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
      "Forwards ICE candidates (or their end) to the handle's PeerConnection. On the handle of a biometric capture session the answer also carries `capture`: its state, its events so far and its outcome, so that a client on any surface follows its capture by trickling (`completed: true` again is harmless); once the capture is over nothing is forwarded. Every node of a cluster answers it alike (it is read from the database). On the user surface only the account that started the capture reads it or trickles to it; another account gets 404 (docs/gateway-capture.md).",
    request: { body: TrickleData },
    response: {
      description: "The gateway's acknowledgement (with `capture` on a capture session's handle)",
      schema: GatewayResponse,
    },
    handle: async ({ services, body, principal, surface }) => {
      const { sessionId, handleId, candidate, candidates } = body;
      return services.gateway.trickle(
        sessionId,
        handleId,
        candidate ? { candidate } : candidates ? { candidates } : { completed: true },
        { principal, surface },
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
    description: 'Hangs up and detaches the handle (when given), then destroys the session.',
    request: { body: SessionData },
    response: { description: "The gateway's answer", schema: GatewayResponse },
    handle: async ({ services, body }) => services.gateway.stop(body.sessionId, body.handleId),
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
    handle: async ({ services }) => services.gateway.info(),
  }),
  defineOperation({
    id: 'getListSession',
    method: 'get',
    path: '/gateway/list-sessions',
    surfaces: adminRoot,
    area,
    component,
    summary: 'List of current sessions',
    response: { description: 'The live sessions', schema: GatewayAdminSessionResponse },
    handle: async ({ services }) => services.gateway.listSessions(),
  }),
  defineOperation({
    id: 'getSession',
    method: 'get',
    path: '/gateway/session',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Information about a session',
    request: { query: SessionQuery },
    response: {
      description:
        'The handles of the session (or the info of one handle), the events the service received for it (webrtcup, media, hangup ...) and those of its capture session (plugindata.plugin "bims.capture"), and the handles whose PeerConnection is up',
      schema: GatewayAdminSessionResponse,
    },
    handle: async ({ services, query }) => services.gateway.session(query.sessionId, query.handleId),
  }),
  defineOperation({
    id: 'getSessionRaw',
    method: 'get',
    path: '/gateway/session-raw',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Raw information about a session',
    request: { query: SessionQuery },
    response: { description: 'The Admin API answer as the gateway sent it', schema: GatewayRaw },
    handle: async ({ services, query }) => services.gateway.sessionRaw(query.sessionId, query.handleId),
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
    handle: async ({ services }) => services.gateway.status(),
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
    handle: async ({ services, body }) => services.gateway.settings(body),
  }),
];
