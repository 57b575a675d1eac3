import { accountOperations } from './accounts.js';
import { adjudicationOperations } from './adjudication.js';
import { biometricDataOperations } from './biometric-data.js';
import { imageOperations } from './images.js';
import { exceptionOperations } from './exceptions.js';
import { dashboardOperations } from './dashboard.js';
import { gatewayOperations } from './gateway.js';
import { licensingOperations } from './licensing.js';
import { managementOperations } from './management.js';
import { operationOperations } from './operations.js';
import { subjectOperations } from './subjects.js';
import type { OperationSpec } from './types.js';

/**
 * The operation table: every operation of the interface, once. Surfaces, OpenAPI documents and the route
 * test are all derived from it.
 */
export const operationTable: readonly OperationSpec[] = [
  ...accountOperations,
  ...adjudicationOperations,
  ...biometricDataOperations,
  ...imageOperations,
  ...exceptionOperations,
  ...dashboardOperations,
  ...gatewayOperations,
  ...licensingOperations,
  ...managementOperations,
  ...operationOperations,
  ...subjectOperations,
];
