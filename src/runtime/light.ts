// The part of the runtime's public surface that loads no third-party module (no Kubernetes client, pino or
// prom-client): errors, JSON shape checks, label selectors, status conditions, the TypeBox-to-CRD schema converter,
// the pure Lease rules and the listeners' defaults that flag help names. For code on a command's start-up path, such
// as the error classes of each area and `tessera image inspect`, which must start nearly as fast as `node -e 0`.
// index.ts exports the same names; everything else is imported from index.ts.
export {
  TesseraError,
  RuntimeError,
  InvalidArgumentError,
  ApiStatusError,
  ApiTransportError,
  ApiResponseError,
  WatchExpiredError,
  WatchStalledError,
  TerminalError,
  JsonTooLargeError,
  isNotFound,
  ignoreNotFound,
  errorMessage,
  isConflict,
  isAlreadyExists,
  isGone,
  type RuntimeErrorCode,
} from './errors.js';
export { isRecord } from './json.js';
export {
  CrdSchemaError,
  standInCrd,
  toCrdJson,
  toStructuralSchema,
  type CrdJson,
  type CrdJsonObject,
  type CrdKeyOrder,
  type StandInCrdOptions,
  type StructuralSchemaOptions,
} from './crd-schema.js';
export type { GeneratedFile } from './generated-file.js';
export {
  DEFAULT_LISTEN_HOST,
  DEFAULT_PROBE_PORT,
  DEFAULT_WEBHOOK_MAX_CONNECTIONS,
  DEFAULT_WEBHOOK_MAX_REQUEST_BYTES,
  DEFAULT_WEBHOOK_PORT,
} from './listener-defaults.js';
export {
  decideLease,
  fingerprintOf,
  microTime,
  observe,
  releasedSpec,
  type LeaseSpec,
  type LeaseDecision,
  type ObservedLease,
} from './lease-decision.js';
export {
  JsonShapeScanner,
  checkJsonShape,
  parseBudgetedJson,
  type JsonShapeBudget,
  type JsonShapeViolation,
} from './json-budget.js';
export {
  labelSelectorMatcher,
  labelSelectorMatches,
  labelSelectorMatchesOrFalse,
  labelSelectorProblem,
  labelSelectorToQuery,
  labelKeyProblem,
  labelValueProblem,
  isDnsSubdomain,
  InvalidLabelSelectorError,
  type LabelSelector,
  type LabelSelectorRequirement,
  type LabelMatcher,
  type Labels,
} from './label-selector.js';
export {
  setStatusCondition,
  removeStatusCondition,
  findStatusCondition,
  isStatusConditionTrue,
  isStatusConditionFalse,
  validateCondition,
  metaTime,
  transitionTime,
  MAX_CONDITION_MESSAGE_LENGTH,
  truncateText,
  type Condition,
  type ConditionStatus,
  type ConditionUpdate,
} from './conditions.js';
export { PROJECT_REPOSITORY_URL, readmeSectionUrl } from './project-links.js';
export type { ResourceType } from './resources.js';
