import type { ServiceContext } from './context.js';
import { AuthService } from './auth/auth-service.js';
import { SettingsService } from './settings/settings.js';
import { GatewayService } from './gateway/gateway-service.js';

/** The services a request can reach; built once per process by {@link createServices}. */
export interface Services {
  ctx: ServiceContext;
  auth: AuthService;
  /** Effective settings, cached in-process and shared by every request. */
  settings: SettingsService;
  /** The media gateway (Janus, through the sidecar); holds the keepalive timers of live sessions. */
  gateway: GatewayService;
}

export function createServices(ctx: ServiceContext): Services {
  return { ctx, auth: new AuthService(ctx), settings: new SettingsService(ctx), gateway: new GatewayService(ctx) };
}
