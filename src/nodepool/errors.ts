// Typed errors of the NodePool performance-status area. Each carries a stable `code`; callers branch on `code`,
// never on the message. Messages name the offending object and say what to do. A malformed flag or argument is
// the runtime's InvalidArgumentError (one for every area).
import { TesseraError } from '../runtime/light.js';

export type NodePoolErrorCode =
  | 'TESSERA_NODEPOOL_STATUS_UNDECODABLE'
  | 'TESSERA_NODEPOOL_STATUS_INVALID'
  | 'TESSERA_NODEPOOL_BUDGET_EXCEEDED'
  | 'TESSERA_NODEPOOL_PROFILE_UNDECODABLE'
  | 'TESSERA_NODEPOOL_CONFIGMAP_INCOMPLETE';

export class NodePoolError extends TesseraError<NodePoolErrorCode> {}

/** The `status` key of a status ConfigMap is not a PerformanceProfileStatus in YAML or JSON. */
export class StatusUndecodableError extends NodePoolError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('TESSERA_NODEPOOL_STATUS_UNDECODABLE', detail, options);
  }
}

/**
 * A decoded status holds a condition the NodePool cannot carry (a type, reason or message beyond the NodePool CRD's
 * limits, or a type twice): mirroring it would make the API server reject the whole NodePool status update.
 */
export class StatusInvalidError extends NodePoolError {
  constructor(detail: string) {
    super('TESSERA_NODEPOOL_STATUS_INVALID', detail);
  }
}

/** Which budget of untrusted text was exceeded; see bounded-yaml.ts for the defaults. */
export type BudgetName = 'bytes' | 'depth' | 'nodes' | 'aliases' | 'conditions';

/**
 * Untrusted text exceeds a budget checked before the expensive step (parsing, mirroring): `budget` names it,
 * `limit` is its value and `actual` what was found (a lower bound when counting stopped at the limit).
 */
export class BudgetExceededError extends NodePoolError {
  readonly budget: BudgetName;
  readonly limit: number;
  readonly actual: number;
  constructor(budget: BudgetName, limit: number, actual: number, detail: string) {
    super('TESSERA_NODEPOOL_BUDGET_EXCEEDED', detail);
    this.budget = budget;
    this.limit = limit;
    this.actual = actual;
  }
}

/** A `tuning` key does not hold a PerformanceProfile manifest with a name. */
export class ProfileUndecodableError extends NodePoolError {
  constructor(configMap: string, detail: string, options?: { cause?: unknown }) {
    super(
      'TESSERA_NODEPOOL_PROFILE_UNDECODABLE',
      `ConfigMap ${configMap}: key "tuning" does not hold a usable PerformanceProfile (${detail}); fix the manifest in that ConfigMap`,
      options,
    );
  }
}

/** A ConfigMap lacks a label, annotation or key the contract requires. */
export class ConfigMapIncompleteError extends NodePoolError {
  constructor(configMap: string, missing: string) {
    super(
      'TESSERA_NODEPOOL_CONFIGMAP_INCOMPLETE',
      `ConfigMap ${configMap} has no ${missing}; it was not written by the NodePool controller, or was edited by hand`,
    );
  }
}
