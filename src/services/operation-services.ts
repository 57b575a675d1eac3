import type { SampleServices } from './biometrics/sample-services.js';
import type { GalleryService } from './gallery/gallery-service.js';
import type { LicensingService } from './licensing/licensing-service.js';

/**
 * What enrolling a subject or running an operation uses of the services: analysing samples, the gallery they
 * are matched against and stored into, and the licence that counts them. A live capture runs operations, and the
 * gateway service holds the captures, so naming `Services` here would tie the gateway, capture, enrolment and
 * operation files into one type cycle with `services/index.ts` (issue 34). `Services` has all of these, so a
 * caller holding it passes it as it is.
 */
export interface OperationServices extends SampleServices {
  gallery: GalleryService;
  licensing: LicensingService;
}
