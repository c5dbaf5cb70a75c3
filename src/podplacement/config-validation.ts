// Validation that the CRD schema cannot express, served as validating webhooks: a PodPlacementConfig needs the
// ClusterPodPlacementConfig to exist and a priority unique in its namespace; the ClusterPodPlacementConfig cannot
// be deleted while any PodPlacementConfig exists. Decisions are pure functions; handlers read the API server
// directly (not a cache) so that two configs created back to back are both seen.
import type { AdmissionHandler, AdmissionRequest, AdmissionResult } from '../runtime/index.js';
import { allowed, denied } from '../runtime/index.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { CLUSTER_CONFIG_NAME } from './constants.js';

export type Verdict = { allowed: true } | { allowed: false; message: string };
import { labelSelectorProblem } from './label-selector.js';

function duplicateArchitecture(config: {
  spec?: { plugins?: { nodeAffinityScoring?: { platforms?: { architecture: string }[] } } };
}): string | undefined {
  const seen = new Set<string>();
  for (const p of config.spec?.plugins?.nodeAffinityScoring?.platforms ?? []) {
    if (seen.has(p.architecture)) return p.architecture;
    seen.add(p.architecture);
  }
  return undefined;
}

/** CREATE/UPDATE of a PodPlacementConfig, given the other configs of its namespace. */
export function validatePodPlacementConfig(input: {
  operation: 'CREATE' | 'UPDATE';
  config: PodPlacementConfig;
  old?: PodPlacementConfig;
  clusterConfigExists: boolean;
  namespaceConfigs: readonly PodPlacementConfig[];
}): Verdict {
  if (!input.clusterConfigExists) {
    return {
      allowed: false,
      message:
        'ClusterPodPlacementConfig does not exist: you must create a ClusterPodPlacementConfig before creating a namespaced PodPlacementConfig',
    };
  }
  const dup = duplicateArchitecture(input.config);
  if (dup)
  const selectorProblem = labelSelectorProblem(input.config.spec.labelSelector);
  if (selectorProblem)
    return { allowed: false, message: `spec.labelSelector is invalid: ${selectorProblem}` };
    return {
      allowed: false,
      message: `duplicate architecture ${dup} in nodeAffinityScoring.platforms: list each architecture at most once`,
    };
  const priority = input.config.spec.priority ?? 0;
  if (input.operation === 'UPDATE' && input.old && (input.old.spec.priority ?? 0) === priority)
    return { allowed: true };
  const name = input.config.metadata.name;
  const clash = input.namespaceConfigs.find(
    (c) => c.metadata.name !== name && (c.spec.priority ?? 0) === priority,
  );
  if (clash) {
    return {
      allowed: false,
      message: `priority ${priority} is already used by PodPlacementConfig ${clash.metadata.name ?? ''} in this namespace: priorities must be unique per namespace, choose another value (0-255)`,
    };
  }
  return { allowed: true };
}

/** DELETE of the ClusterPodPlacementConfig, given how many PodPlacementConfigs exist cluster-wide. */
export function validateClusterConfigDeletion(podPlacementConfigCount: number): Verdict {
  if (podPlacementConfigCount === 0) return { allowed: true };
  return {
    allowed: false,
    message: `cannot delete ClusterPodPlacementConfig while ${podPlacementConfigCount} PodPlacementConfig(s) still exist: delete them first`,
  };
}

/** CREATE/UPDATE of the ClusterPodPlacementConfig (the schema checks the rest). */
export function validateClusterConfig(config: ClusterPodPlacementConfig): Verdict {
  if (config.metadata.name !== CLUSTER_CONFIG_NAME) {
    return {
      allowed: false,
      message: `ClusterPodPlacementConfig is a singleton: its name must be '${CLUSTER_CONFIG_NAME}'`,
    };
  }
  const dup = duplicateArchitecture(config);
  if (dup)
  const selectorProblem = labelSelectorProblem(config.spec?.namespaceSelector);
  if (selectorProblem)
    return { allowed: false, message: `spec.namespaceSelector is invalid: ${selectorProblem}` };
    return {
      allowed: false,
      message: `duplicate architecture ${dup} in nodeAffinityScoring.platforms: list each architecture at most once`,
    };
  return { allowed: true };
}

/** Uncached reads the handlers need; consumer-owned. */
export interface ConfigReader {
  clusterConfigExists(signal: AbortSignal): Promise<boolean>;
  podPlacementConfigs(namespace: string | undefined, signal: AbortSignal): Promise<PodPlacementConfig[]>;
}

function toResult(v: Verdict): AdmissionResult {
  return v.allowed ? allowed() : denied(v.message, 422, 'Invalid');
}

export class PodPlacementConfigValidator implements AdmissionHandler {
  constructor(private readonly reader: ConfigReader) {}

  async handle(request: AdmissionRequest, signal: AbortSignal): Promise<AdmissionResult> {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
    const config = request.object as PodPlacementConfig;
    const [exists, namespaceConfigs] = await Promise.all([
      this.reader.clusterConfigExists(signal),
      this.reader.podPlacementConfigs(request.namespace ?? config.metadata.namespace, signal),
    ]);
    return toResult(
      validatePodPlacementConfig({
        operation: request.operation,
        config,
        old: request.oldObject as PodPlacementConfig | undefined,
        clusterConfigExists: exists,
        namespaceConfigs,
      }),
    );
  }
}

export class ClusterConfigValidator implements AdmissionHandler {
  constructor(private readonly reader: ConfigReader) {}

  async handle(request: AdmissionRequest, signal: AbortSignal): Promise<AdmissionResult> {
    if (request.operation === 'DELETE') {
      return toResult(
        validateClusterConfigDeletion((await this.reader.podPlacementConfigs(undefined, signal)).length),
      );
    }
    if (request.operation === 'CREATE' || request.operation === 'UPDATE') {
      return toResult(validateClusterConfig(request.object as ClusterPodPlacementConfig));
    }
    return allowed();
  }
}
