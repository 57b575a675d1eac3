// The clients the gateway service speaks through, made from the configuration: the sidecar (which knows where Janus
// listens and its secrets), Janus's client and Admin API, and the sidecar's media decoders.
import { type Config, sidecarUrlOf } from '../../config/config.js';
import { JanusAdminClient } from '../../gateway/admin-client.js';
import { DecoderClient } from '../../gateway/decoder-client.js';
import { JanusClient } from '../../gateway/janus-client.js';
import { SidecarClient } from '../../gateway/sidecar-client.js';

export interface GatewayClients {
  sidecar: SidecarClient;
  janus: JanusClient;
  admin: JanusAdminClient;
  decoders: DecoderClient;
}

/** The gateway's clients; Janus's ones find Janus through the sidecar and forget it when it is unreachable. */
export function gatewayClients(config: Config): GatewayClients {
  const sidecar = new SidecarClient({
    url: sidecarUrlOf(config),
    token: config.BIMS_SIDECAR_TOKEN,
    timeoutMs: config.BIMS_GATEWAY_TIMEOUT_MS,
  });
  const common = {
    endpoints: () => sidecar.endpoints(),
    timeoutMs: config.BIMS_GATEWAY_TIMEOUT_MS,
    onUnreachable: () => sidecar.invalidate(),
  };
  const decoders = new DecoderClient({
    url: sidecarUrlOf(config),
    token: config.BIMS_SIDECAR_TOKEN,
    timeoutMs: config.BIMS_GATEWAY_TIMEOUT_MS,
  });
  return { sidecar, janus: new JanusClient(common), admin: new JanusAdminClient(common), decoders };
}
