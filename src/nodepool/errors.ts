// Typed errors of the NodePool performance-status area. Each carries a stable `code`; callers branch on `code`,
// never on the message. Messages name the offending object and say what to do.

export type NodePoolErrorCode =
  | 'TESSERA_NODEPOOL_STATUS_UNDECODABLE'
  | 'TESSERA_NODEPOOL_PROFILE_UNDECODABLE'
  | 'TESSERA_NODEPOOL_CONFIGMAP_INCOMPLETE'
  | 'TESSERA_NODEPOOL_BAD_ARGUMENT';

export class NodePoolError extends Error {
  readonly code: NodePoolErrorCode;
  constructor(code: NodePoolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The `status` key of a status ConfigMap is not a PerformanceProfileStatus in YAML or JSON. */
export class StatusUndecodableError extends NodePoolError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('TESSERA_NODEPOOL_STATUS_UNDECODABLE', detail, options);
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

/** A command-line argument or option is malformed. */
export class BadArgumentError extends NodePoolError {
  constructor(message: string) {
    super('TESSERA_NODEPOOL_BAD_ARGUMENT', message);
  }
}
