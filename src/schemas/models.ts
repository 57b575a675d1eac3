import type { z } from 'zod';
import type { Surface } from '../auth/roles.js';
import { AccessTokenResponse, LoginResponse } from './auth.js';
import { ExceptionModel } from './exceptions.js';
import {
  AdjudicationAdjudicatorDecision,
  AdjudicationPending,
  AdjudicationPendingOperation,
  AdjudicationSolved,
  AdjudicationSolvedOperation,
  AdjudicatorDecision,
} from './adjudication.js';
import { BiometricFaceData, BiometricVoiceData, Image, Rectangle, SessionDownload } from './biometric-data.js';
import {
  ConnectData,
  GatewayAdminGetStatusResponse,
  GatewayAdminSessionResponse,
  GatewayResponse,
  GatewayResponseData,
  GatewayResponseError,
  GatewayStatus,
  Jsep,
  SessionData,
  TrickleData,
} from './gateway.js';
import {
  FVAdvancedInitParams,
  FVInitParams,
  MultimodalAdvancedInitParams,
  MultimodalInitParams,
} from './gateway-init.js';
import { Cloud, Dongle, InternetLicense, PacketBytes, Usage } from './licensing.js';
import { CandidateData, ChecksFromImage, CreateOperationRequest, Operation } from './operations.js';
import {
  CreateSubjectRequest,
  EnrolledModalities,
  GetTemplateModalitiesRequest,
  MultimodalSubject,
  ReextractSubjectRequest,
  Subject,
  SubjectId,
  SubjectQRCode,
  TemplateModalities,
} from './subjects.js';
import { DbClusterStatus } from './management.js';
import {
  AccountModel,
  ChangeAccountRequest,
  CreateAccountRequest,
  DeleteAccount,
  DeleteAccountsRequest,
} from './accounts.js';

/**
 * The named models of the seed's section 2 with the surfaces that show them; each becomes a component of
 * the OpenAPI document of those surfaces under exactly its seed name.
 */
export const namedModels: { name: string; schema: z.ZodType; surfaces: readonly Surface[] }[] = [
  { name: 'AccessTokenResponse', schema: AccessTokenResponse, surfaces: ['admin', 'root', 'user'] },
  { name: 'AccountModel', schema: AccountModel, surfaces: ['admin'] },
  { name: 'ChangeAccountRequest', schema: ChangeAccountRequest, surfaces: ['admin'] },
  { name: 'CreateAccountRequest', schema: CreateAccountRequest, surfaces: ['admin'] },
  { name: 'DbClusterStatus', schema: DbClusterStatus, surfaces: ['admin', 'root'] },
  { name: 'DeleteAccount', schema: DeleteAccount, surfaces: ['admin'] },
  { name: 'DeleteAccountsRequest', schema: DeleteAccountsRequest, surfaces: ['admin'] },
  { name: 'ExceptionModel', schema: ExceptionModel, surfaces: ['admin', 'root'] },
  { name: 'LoginResponse', schema: LoginResponse, surfaces: ['admin', 'root', 'user'] },
  // Seed sections 4.2-4.4, 4.6-4.8, 4.10-4.11 (subjects, operations, stored data, adjudication, gateway, licensing):
  { name: 'AdjudicationAdjudicatorDecision', schema: AdjudicationAdjudicatorDecision, surfaces: ['admin'] },
  { name: 'AdjudicationPending', schema: AdjudicationPending, surfaces: ['admin', 'root'] },
  { name: 'AdjudicationPendingOperation', schema: AdjudicationPendingOperation, surfaces: ['admin', 'root'] },
  { name: 'AdjudicationSolved', schema: AdjudicationSolved, surfaces: ['admin', 'root'] },
  { name: 'AdjudicationSolvedOperation', schema: AdjudicationSolvedOperation, surfaces: ['admin', 'root'] },
  { name: 'AdjudicatorDecision', schema: AdjudicatorDecision, surfaces: ['admin', 'root'] },
  { name: 'BiometricFaceData', schema: BiometricFaceData, surfaces: ['admin', 'root', 'user'] },
  { name: 'BiometricVoiceData', schema: BiometricVoiceData, surfaces: ['admin', 'root', 'user'] },
  { name: 'CandidateData', schema: CandidateData, surfaces: ['admin', 'root', 'user'] },
  { name: 'ChecksFromImage', schema: ChecksFromImage, surfaces: ['admin', 'root'] },
  { name: 'Cloud', schema: Cloud, surfaces: ['admin', 'root'] },
  { name: 'ConnectData', schema: ConnectData, surfaces: ['admin', 'root', 'user'] },
  { name: 'CreateOperationRequest', schema: CreateOperationRequest, surfaces: ['admin', 'root'] },
  { name: 'CreateSubjectRequest', schema: CreateSubjectRequest, surfaces: ['admin', 'root', 'user'] },
  { name: 'Dongle', schema: Dongle, surfaces: ['admin', 'root'] },
  { name: 'EnrolledModalities', schema: EnrolledModalities, surfaces: ['admin', 'root', 'user'] },
  { name: 'FVAdvancedInitParams', schema: FVAdvancedInitParams, surfaces: ['admin', 'root', 'user'] },
  { name: 'FVInitParams', schema: FVInitParams, surfaces: ['admin', 'root', 'user'] },
  { name: 'GatewayAdminGetStatusResponse', schema: GatewayAdminGetStatusResponse, surfaces: ['admin', 'root'] },
  { name: 'GatewayAdminSessionResponse', schema: GatewayAdminSessionResponse, surfaces: ['admin', 'root'] },
  { name: 'GatewayResponse', schema: GatewayResponse, surfaces: ['admin', 'root', 'user'] },
  { name: 'GatewayResponseData', schema: GatewayResponseData, surfaces: ['admin', 'root', 'user'] },
  { name: 'GatewayResponseError', schema: GatewayResponseError, surfaces: ['admin', 'root', 'user'] },
  { name: 'GatewayStatus', schema: GatewayStatus, surfaces: ['admin', 'root'] },
  { name: 'GetTemplateModalitiesRequest', schema: GetTemplateModalitiesRequest, surfaces: ['admin', 'root', 'user'] },
  { name: 'Image', schema: Image, surfaces: ['admin', 'root', 'user'] },
  { name: 'InternetLicense', schema: InternetLicense, surfaces: ['admin', 'root'] },
  { name: 'Jsep', schema: Jsep, surfaces: ['admin', 'root', 'user'] },
  { name: 'MultimodalAdvancedInitParams', schema: MultimodalAdvancedInitParams, surfaces: ['admin', 'root', 'user'] },
  { name: 'MultimodalInitParams', schema: MultimodalInitParams, surfaces: ['admin', 'root', 'user'] },
  { name: 'MultimodalSubject', schema: MultimodalSubject, surfaces: ['admin', 'root', 'user'] },
  { name: 'Operation', schema: Operation, surfaces: ['admin', 'root', 'user'] },
  { name: 'PacketBytes', schema: PacketBytes, surfaces: ['admin', 'root'] },
  { name: 'Rectangle', schema: Rectangle, surfaces: ['admin', 'root', 'user'] },
  { name: 'ReextractSubjectRequest', schema: ReextractSubjectRequest, surfaces: ['admin', 'root', 'user'] },
  { name: 'SessionData', schema: SessionData, surfaces: ['admin', 'root', 'user'] },
  { name: 'SessionDownload', schema: SessionDownload, surfaces: ['admin', 'root'] },
  { name: 'Subject', schema: Subject, surfaces: ['admin', 'root', 'user'] },
  { name: 'SubjectId', schema: SubjectId, surfaces: ['admin', 'root', 'user'] },
  { name: 'SubjectQRCode', schema: SubjectQRCode, surfaces: ['admin', 'root', 'user'] },
  { name: 'TemplateModalities', schema: TemplateModalities, surfaces: ['admin', 'root', 'user'] },
  { name: 'TrickleData', schema: TrickleData, surfaces: ['admin', 'root', 'user'] },
  { name: 'Usage', schema: Usage, surfaces: ['admin', 'root'] },
];
