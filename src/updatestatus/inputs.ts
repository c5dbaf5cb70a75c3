// The parts of the observed OpenShift objects the assessments read, as plain JSON shapes (what the API server and
// snapshot files carry). Every field is optional because real objects omit empty ones; assessors must treat an
// absent field exactly as Go treats its zero value. Timestamps stay strings here and are parsed where used.
import type { LabelSelector } from '../runtime/light.js';

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string | null;
}

export interface UpdateHistory {
  /** `Completed` or `Partial`. */
  readonly state?: string;
  readonly startedTime?: string | null;
  readonly completionTime?: string | null;
  readonly version?: string;
  readonly image?: string;
}

export interface ClusterVersion {
  readonly metadata?: ObjectMeta;
  readonly status?: {
    readonly desired?: { readonly version?: string; readonly image?: string };
    readonly history?: readonly UpdateHistory[];
    readonly conditions?: readonly Condition[];
  };
}

export interface ClusterOperator {
  readonly metadata?: ObjectMeta;
  readonly status?: {
    readonly conditions?: readonly Condition[];
    readonly versions?: readonly { readonly name?: string; readonly version?: string }[];
  };
}

export type { LabelSelector, LabelSelectorRequirement } from '../runtime/light.js';

export interface MachineConfigPool {
  readonly metadata?: ObjectMeta;
  readonly spec?: {
    readonly paused?: boolean;
    readonly configuration?: { readonly name?: string };
    readonly nodeSelector?: LabelSelector | null;
  };
}

export interface MachineConfig {
  readonly metadata?: ObjectMeta;
}

export interface Node {
  readonly metadata?: ObjectMeta;
  readonly spec?: { readonly unschedulable?: boolean };
  readonly status?: { readonly conditions?: readonly Condition[] };
}

/**
 * machineconfiguration.openshift.io/v1 MachineConfigNode (OpenShift 4.19+; v1alpha1 only behind TechPreview in
 * 4.15-4.18): the machine-config operator's per-node update report, one per node, named like it. `spec` holds the
 * config the node should move to (copied from its desiredConfig annotation); `status.configVersion.desired` is
 * set once the daemon has taken that config up ("not-yet-set" before), `current` mirrors currentConfig. Each
 * step of the daemon's update is a condition (`UpdatePrepared`, `UpdateExecuted`, `Cordoned`, `Drained`,
 * `RebootedNode`, `Updated`, ...): True done, Unknown in progress, False not (yet) in this update.
 */
export interface MachineConfigNode {
  readonly metadata?: ObjectMeta;
  readonly spec?: {
    readonly node?: { readonly name?: string };
    readonly pool?: { readonly name?: string };
    readonly configVersion?: { readonly desired?: string };
  };
  readonly status?: {
    readonly conditions?: readonly Condition[];
    readonly configVersion?: { readonly current?: string; readonly desired?: string } | null;
  };
}

export interface Deployment {
  readonly metadata?: ObjectMeta;
  readonly spec?: {
    readonly template?: {
      readonly spec?: {
        readonly containers?: readonly { readonly name?: string; readonly image?: string }[];
      };
    };
  };
}

/** One alert as Prometheus/Thanos `/api/v1/alerts` returns it (the fields oc reads). */
export interface Alert {
  readonly labels?: {
    readonly alertname?: string;
    readonly namespace?: string;
    readonly severity?: string;
    readonly [label: string]: string | undefined;
  };
  readonly annotations?: {
    readonly description?: string;
    readonly summary?: string;
    readonly runbook_url?: string;
    readonly message?: string;
    readonly [annotation: string]: string | undefined;
  };
  readonly state?: string;
  readonly activeAt?: string;
}

export interface AlertData {
  readonly status?: string;
  readonly data?: { readonly alerts?: readonly Alert[] };
}

/** Everything one assessment looks at. */
export interface ClusterSnapshot {
  readonly clusterVersion: ClusterVersion;
  readonly clusterOperators: readonly ClusterOperator[];
  readonly machineConfigPools: readonly MachineConfigPool[];
  readonly machineConfigs: readonly MachineConfig[];
  readonly nodes: readonly Node[];
  /**
   * The nodes' MachineConfigNodes; undefined when the cluster does not serve them (before OpenShift 4.19) or the
   * snapshot has none. Each node's phase comes from its MachineConfigNode when that reports the update the node's
   * annotations describe, else from the annotations (nodestate.ts).
   */
  readonly machineConfigNodes?: readonly MachineConfigNode[] | undefined;
  /** Firing alerts; undefined when they could not be fetched (health then ignores alerts). */
  readonly alerts?: AlertData | undefined;
  /** Image of the machine-config-operator container in its Deployment; "" when unknown. */
  readonly mcoImagePullSpec: string;
}
