import type { JanusAdminClient } from '../../gateway/admin-client.js';

/** The settings the Admin API can change at run time, in our camelCase. */
export interface GatewaySettings {
  logLevel?: number;
  logTimestamps?: boolean;
  logColors?: boolean;
  lockingDebug?: boolean;
  refcountDebug?: boolean;
  libniceDebug?: boolean;
  sessionTimeout?: number;
  minNackQueue?: number;
  noMediaTimer?: number;
  slowlinkThreshold?: number;
}

/** Each setting's Admin API request and the field that carries its value (Janus's admin.html). */
const requests: Record<keyof GatewaySettings, [request: string, field: string]> = {
  logLevel: ['set_log_level', 'level'],
  logTimestamps: ['set_log_timestamps', 'timestamps'],
  logColors: ['set_log_colors', 'colors'],
  lockingDebug: ['set_locking_debug', 'debug'],
  refcountDebug: ['set_refcount_debug', 'debug'],
  libniceDebug: ['set_libnice_debug', 'debug'],
  sessionTimeout: ['set_session_timeout', 'timeout'],
  minNackQueue: ['set_min_nack_queue', 'min_nack_queue'],
  noMediaTimer: ['set_no_media_timer', 'no_media_timer'],
  slowlinkThreshold: ['set_slowlink_threshold', 'slowlink_threshold'],
};

/**
 * Apply the given settings one Admin API request at a time, in a fixed order. Janus has no batch request:
 * a failure stops at that setting, and the ones before it stay applied.
 */
export async function applySettings(admin: JanusAdminClient, settings: GatewaySettings): Promise<void> {
  for (const key of Object.keys(requests) as (keyof GatewaySettings)[]) {
    const value = settings[key];
    if (value === undefined) continue;
    const [request, field] = requests[key];
    await admin.request(request, { [field]: value });
  }
}
