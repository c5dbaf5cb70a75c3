// Validation that the CRD schema cannot express, served as validating webhooks: a PodPlacementConfig needs the
// ClusterPodPlacementConfig to exist and a priority unique in its namespace; the ClusterPodPlacementConfig cannot
// be deleted while any PodPlacementConfig exists, and is admitted with a warning for what Tessera accepts but does
// not implement (./unsupported-plugins.ts). Decisions are pure functions. The webhook port answers any
// caller, so reviews are answered from the informer cache and may cost API calls only within a budget: the DELETE
// rule counts PodPlacementConfigs in the cache (no API call; the finalizer upholds the rule should the cache lag).
// A PodPlacementConfig the cache refuses (priority clash) is refused at once; one it would admit is confirmed
// with a namespaced read, so that two configs created back to back are both seen, while the confirming-read
// budget lasts (CONFIRMING_READS_PER_SECOND); beyond it the cache decides.
import {
  allowed,
  denied,
  realClock,
  labelSelectorProblem,
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResult,
  type Clock,
} from '../runtime/index.js';
import type { ClusterPodPlacementConfig, PodPlacementConfig } from './api/schema.js';
import { CLUSTER_CONFIG_NAME } from './constants.js';
import { clusterConfigWarnings } from './unsupported-plugins.js';

export type Verdict = { allowed: true } | { allowed: false; message: string };

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
  const selectorProblem = labelSelectorProblem(input.config.spec.labelSelector);
  if (selectorProblem)
    return { allowed: false, message: `spec.labelSelector is invalid: ${selectorProblem}` };
  const dup = duplicateArchitecture(input.config);
  if (dup)
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
  const selectorProblem = labelSelectorProblem(config.spec?.namespaceSelector);
  if (selectorProblem)
    return { allowed: false, message: `spec.namespaceSelector is invalid: ${selectorProblem}` };
  const dup = duplicateArchitecture(config);
  if (dup)
    return {
      allowed: false,
      message: `duplicate architecture ${dup} in nodeAffinityScoring.platforms: list each architecture at most once`,
    };
  return { allowed: true };
}

/** Reads the handlers need; consumer-owned. The cached ones never call the API server. */
export interface ConfigReader {
  cachedClusterConfigExists(): boolean;
  /** One GET of the ClusterPodPlacementConfig by name. */
  clusterConfigExists(signal: AbortSignal): Promise<boolean>;
  cachedPodPlacementConfigs(namespace: string): readonly PodPlacementConfig[];
  /** The PodPlacementConfigs of one namespace, read from the API server (namespaced, never cluster-wide). */
  podPlacementConfigs(namespace: string, signal: AbortSignal): Promise<readonly PodPlacementConfig[]>;
  /** How many PodPlacementConfigs exist cluster-wide. */
  cachedPodPlacementConfigCount(): number;
}

function toResult(v: Verdict): AdmissionResult {
  return v.allowed ? allowed() : denied(v.message, 422, 'Invalid');
}

/** API reads that PodPlacementConfig reviews may trigger, per second, whoever sends them. */
export const CONFIRMING_READS_PER_SECOND = 5;
/** Confirming reads available at once after a quiet period. */
export const CONFIRMING_READS_BURST = 20;

/** Token bucket that refuses rather than queues: a review over budget is answered from the cache. */
class ReadBudget {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  tryTake(): boolean {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export interface PodPlacementConfigValidatorOptions {
  clock?: Clock;
  /** Default: CONFIRMING_READS_PER_SECOND. */
  confirmingReadsPerSecond?: number;
  /** Default: CONFIRMING_READS_BURST. */
  confirmingReadsBurst?: number;
}

export class PodPlacementConfigValidator implements AdmissionHandler {
  private readonly budget: ReadBudget;

  constructor(
    private readonly reader: ConfigReader,
    options: PodPlacementConfigValidatorOptions = {},
  ) {
    this.budget = new ReadBudget(
      options.confirmingReadsPerSecond ?? CONFIRMING_READS_PER_SECOND,
      options.confirmingReadsBurst ?? CONFIRMING_READS_BURST,
      options.clock ?? realClock,
    );
  }

  async handle(request: AdmissionRequest, signal: AbortSignal): Promise<AdmissionResult> {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
    const config = request.object as PodPlacementConfig;
    const namespace = request.namespace ?? config.metadata.namespace;
    // An empty namespace would turn the namespaced read into a cluster-wide LIST; the API server always sends one.
    if (!namespace) return denied('a PodPlacementConfig review must name its namespace', 400, 'BadRequest');
    const verdict = (clusterConfigExists: boolean, namespaceConfigs: readonly PodPlacementConfig[]) =>
      validatePodPlacementConfig({
        operation: request.operation as 'CREATE' | 'UPDATE',
        config,
        old: request.oldObject as PodPlacementConfig | undefined,
        clusterConfigExists,
        namespaceConfigs,
      });
    const cachedExists = this.reader.cachedClusterConfigExists();
    const fromCache = verdict(cachedExists, this.reader.cachedPodPlacementConfigs(namespace));
    // The cache lags at most moments behind: a refusal from it stands (at worst it names a config deleted just
    // now; the user retries). What it would admit is confirmed by the API server, while the budget lasts.
    if ((!fromCache.allowed && cachedExists) || !this.budget.tryTake()) return toResult(fromCache);
    const [exists, namespaceConfigs] = await Promise.all([
      cachedExists || this.reader.clusterConfigExists(signal),
      this.reader.podPlacementConfigs(namespace, signal),
    ]);
    return toResult(verdict(exists, namespaceConfigs));
  }
}

export class ClusterConfigValidator implements AdmissionHandler {
  constructor(private readonly reader: ConfigReader) {}

  handle(request: AdmissionRequest): AdmissionResult {
    if (request.operation === 'DELETE') {
      return toResult(validateClusterConfigDeletion(this.reader.cachedPodPlacementConfigCount()));
    }
    if (request.operation === 'CREATE' || request.operation === 'UPDATE') {
      const config = request.object as ClusterPodPlacementConfig;
      const result = toResult(validateClusterConfig(config));
      // What is accepted but not implemented is said at every write, so whoever applies it reads it.
      const warnings = result.allowed ? clusterConfigWarnings(config) : [];
      return warnings.length > 0 ? { ...result, warnings } : result;
    }
    return allowed();
  }
}
