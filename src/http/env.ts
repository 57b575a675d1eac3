import type { Context } from 'hono';
import type { Principal } from '../services/auth/principal.js';
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
    /** Headers the answer carries besides the fixed ones (request id, CORS), noted before the handler runs. */
    answerHeaders?: Record<string, string>;
    /**
     * Reads a request header by its lower-case name the runtime's cheapest way (`everyRequest`'s reader): on
     * Node, `c.req.header()` builds the request's whole `Headers` object for one header.
     */
    readHeader?: (c: Context<AppEnv>, name: string) => string | undefined;
    /** The answer made with every header already in place (`jsonAnswer`): nothing to add afterwards. */
    completeAnswer?: Response;
  };
}
