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
  /** Firing alerts; undefined when they could not be fetched (health then ignores alerts). */
  readonly alerts?: AlertData | undefined;
  /** Image of the machine-config-operator container in its Deployment; "" when unknown. */
  readonly mcoImagePullSpec: string;
}
