import type { Principal } from '../auth/principal.js';
import type { Services } from '../services/index.js';

/** What middleware leaves on the request context for the handlers after it. */
export interface AppEnv {
  Variables: {
    services: Services;
    requestId: string;
    clientAddress: string;
    principal: Principal;
    /** The seed operation being served, for the exception log. */
    operationId?: string;
    surface?: string;
  };
}
