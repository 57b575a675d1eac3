import type { ServiceContext } from '../context.js';
import type { SettingsService } from '../settings/settings.js';
import type { ExtractorProvider } from './extractor-provider.js';

/**
 * What analysing samples uses of the services (issue 34: a verb takes what it uses, not the whole `Services`):
 * the context (configuration, the log, the exception log), the settings the gates read, and the extractor.
 * `Services` has all three, so a caller holding it passes it as it is.
 */
export interface SampleServices {
  ctx: ServiceContext;
  settings: SettingsService;
  extractors: ExtractorProvider;
}
