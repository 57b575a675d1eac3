import { fromBase64, toBase64 } from '../encoding/base64.js';
import { binary } from '../schemas/common.js';
import {
  Cloud,
  Dongles,
  DongleDumpQuery,
  InternetLicense,
  LicensingToken,
  PacketBytes,
  UpdateStatus,
  Usage,
  UsageQuery,
} from '../schemas/licensing.js';
import { dongleDump, dongleUpdateStatus, listDongles, updateDongle } from '../services/licensing/dongles.js';
import { cloudInfo, internetInfo, licensingToken } from '../services/licensing/licence-sources.js';
import { usageReport } from '../services/licensing/usage-report.js';
import { preferredType } from './content-negotiation.js';
import { defineOperation, mediaAnswer } from './types.js';

const component = 'The licensing sidecar';
const area = 'Licensing';
const adminRoot = ['admin', 'root'] as const;

/**
 * Seed section 4.8: licences from the cloud, an internet licence file or a dongle, and their usage. Every
 * answer carries `licensing` (LICENSED or UNLICENSED, and why).
 */
export const licensingOperations = [
  defineOperation({
    id: 'getCloudLicensingInfo',
    method: 'get',
    path: '/licensing/cloud',
    surfaces: adminRoot,
    area,
    summary: 'Currently used cloud license information',
    response: { description: 'The cloud licence', schema: Cloud },
    handle: async ({ services }) => cloudInfo(services),
  }),
  defineOperation({
    id: 'getInternetLicensingInfo',
    method: 'get',
    path: '/licensing/internet',
    surfaces: adminRoot,
    area,
    summary: 'Currently used internet license information',
    response: { description: 'The internet licence', schema: InternetLicense },
    handle: async ({ services }) => internetInfo(services),
  }),
  defineOperation({
    id: 'getDongles',
    method: 'get',
    path: '/licensing/dongles',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Dongles attached to the licensing component',
    response: { description: 'The dongles, hardware or the software one', schema: Dongles },
    handle: async ({ services }) => listDongles(services),
  }),
  defineOperation({
    id: 'generateDongleDump',
    method: 'get',
    path: '/licensing/generate-dongle-dump',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Generates a dongle dump',
    description:
      "The dongle's identity, licence and counters as a file for the vendor; as PacketBytes on Accept: application/json.",
    request: { query: DongleDumpQuery },
    response: { description: 'The dongle dump', schema: PacketBytes, content: { 'application/octet-stream': binary } },
    handle: async ({ services, query, request }) => {
      const dump = await dongleDump(services, query.dongleId);
      if (
        preferredType(request.headers.get('accept'), ['application/octet-stream', 'application/json']) ===
        'application/json'
      ) {
        return { data: toBase64(dump.bytes), fileName: dump.fileName, contentType: 'application/jose' };
      }
      return mediaAnswer('application/octet-stream', dump.bytes, {
        headers: {
          'Content-Disposition': `attachment; filename="${dump.fileName}"`,
          'Cache-Control': 'no-store',
          Vary: 'Accept',
        },
      });
    },
  }),
  defineOperation({
    id: 'getLicensingToken',
    method: 'get',
    path: '/licensing/token',
    surfaces: adminRoot,
    area,
    summary: 'Current licensing token',
    description: 'The signed licence in force (compact JWS); the cloud credential itself is never shown.',
    response: { description: 'The licensing token', schema: LicensingToken },
    handle: async ({ services }) => licensingToken(services),
  }),
  defineOperation({
    id: 'getLicensingUsage',
    method: 'get',
    path: '/licensing/usage',
    surfaces: adminRoot,
    area,
    summary: 'Usage details of licensing operations',
    request: { query: UsageQuery },
    response: { description: 'Operation counts per type and period', schema: Usage },
    handle: async ({ services, query }) => usageReport(services, query),
  }),
  defineOperation({
    id: 'getUpdateStatus',
    method: 'get',
    path: '/licensing/update-status',
    surfaces: adminRoot,
    area,
    component,
    summary: 'Current status of the licensing update',
    response: { description: 'The state of the last update', schema: UpdateStatus },
    handle: async ({ services }) => dongleUpdateStatus(services),
  }),
  defineOperation({
    id: 'updateDongle',
    method: 'post',
    path: '/licensing/update',
    surfaces: adminRoot,
    area,
    component,
    problems: {
      422: 'The dongle update was refused (`updateStatus` says why)',
      503: 'The licensing component is unavailable',
    },
    summary: 'Applies an update to the licensing component',
    description:
      'Applies a signed dongle update package (from `npm run licence -- update`): 202 with its state (APPLIED) once the dongle took it; 422 naming the reason when refused (bad signature, another dongle, a replayed or older package). getUpdateStatus reports the last one.',
    request: { body: PacketBytes },
    status: 202,
    response: { description: 'The update was accepted; its state so far', schema: UpdateStatus },
    handle: async ({ services, body }) => updateDongle(services, fromBase64(body.data)),
  }),
];
