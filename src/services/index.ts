import type { ServiceContext } from './context.js';
import { AuthService } from './auth/auth-service.js';

/** The services a request can reach; built once per process by {@link createServices}. */
export interface Services {
  ctx: ServiceContext;
  auth: AuthService;
}

export function createServices(ctx: ServiceContext): Services {
  return { ctx, auth: new AuthService(ctx) };
}
