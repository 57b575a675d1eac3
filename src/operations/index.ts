import { accountOperations } from './accounts.js';
import { exceptionOperations } from './exceptions.js';
import { managementOperations } from './management.js';
import type { OperationSpec } from './types.js';

/**
 * The operation table: every operation of the interface, once. Surfaces, OpenAPI documents and the route
 * test are all derived from it.
 */
export const operationTable: readonly OperationSpec[] = [...accountOperations, ...exceptionOperations, ...managementOperations];
