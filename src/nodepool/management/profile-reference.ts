// What a NodePool's spec.tuningConfig points at, as a pure function of the tuning ConfigMaps it names: one
// PerformanceProfile (and the mirror to make of it in the HCP namespace), none, or why it cannot be resolved.
// Guarantees: a missing ConfigMap, an undecodable manifest, more than one PerformanceProfile, or a missing
// HostedControlPlane is `unresolved` with a message saying what to do; only `profile` yields a mirror.
import type { ConfigMap, NodePool } from '../api/types.js';
import { DATA_KEYS } from '../constants.js';
import { NodePoolError } from '../errors.js';
import {
  hostedControlPlaneNamespace,
  performanceProfileConfigMapName,
  statusConfigMapName,
} from '../names.js';
import { performanceProfileNameIn } from '../status-configmap.js';
import type { WantedMirror } from './mirror-plan.js';
import { type ProfileReference, SUMMARY_REASONS } from './nodepool-conditions.js';

/** What the NodePool references, and the mirror it should have (none unless the reference is a profile). */
export interface ResolvedReference {
  readonly reference: ProfileReference;
  readonly mirror?: WantedMirror;
}

export interface ResolveReferenceInput {
  readonly nodePool: NodePool;
  /** Each entry of spec.tuningConfig with its ConfigMap (undefined: it does not exist), in spec order. */
  readonly tuningConfigMaps: readonly { readonly name: string; readonly configMap?: ConfigMap }[];
  /** Whether the NodePool's HCP namespace has a HostedControlPlane (HyperShift creates both together). */
  readonly controlPlaneExists: boolean;
}

/**
 * performanceProfileNameIn() per ConfigMap object: a burst of status changes reconciles every NodePool again, and
 * the tuning ConfigMaps have not changed, so their YAML need not be parsed again. Keyed by the (immutable, cached)
 * object, so an entry lives only as long as the cache holds that version.
 */
const profileNames = new WeakMap<ConfigMap, { name?: string } | { error: NodePoolError }>();

function profileNameIn(cm: ConfigMap): string | undefined {
  let known = profileNames.get(cm);
  if (!known) {
    try {
      known = { name: performanceProfileNameIn(cm) };
    } catch (err) {
      if (!(err instanceof NodePoolError)) throw err;
      known = { error: err };
    }
    profileNames.set(cm, known);
  }
  if ('error' in known) throw known.error;
  return known.name;
}

const unresolved = (message: string, reason?: string): ResolvedReference => ({
  reference: { kind: 'unresolved', message, ...(reason ? { reason } : {}) },
});

export function resolveProfileReference(input: ResolveReferenceInput): ResolvedReference {
  const np = input.nodePool;
  const namespace = np.metadata.namespace ?? '';
  const found: { cm: string; profile: string; tuning: string }[] = [];
  for (const { name, configMap } of input.tuningConfigMaps) {
    if (!configMap) {
      return unresolved(
        `ConfigMap ${namespace}/${name} named in spec.tuningConfig does not exist; create it or remove the reference`,
      );
    }
    let profile: string | undefined;
    try {
      profile = profileNameIn(configMap);
    } catch (err) {
      if (err instanceof NodePoolError) return unresolved(err.message);
      throw err;
    }
    if (profile) found.push({ cm: name, profile, tuning: configMap.data?.[DATA_KEYS.tuning] ?? '' });
  }
  const first = found[0];
  if (!first) return { reference: { kind: 'none' } };
  if (found.length > 1) {
    return unresolved(
      `there cannot be more than one PerformanceProfile per NodePool. found: ${found.length} (ConfigMaps ${found.map((f) => f.cm).join(', ')})`,
    );
  }
  const hcpNamespace = hostedControlPlaneNamespace(namespace, np.spec.clusterName);
  if (!input.controlPlaneExists) {
    // Until HyperShift creates the HCP namespace with its HostedControlPlane there is nowhere to mirror to.
    return unresolved(
      `no HostedControlPlane in namespace ${hcpNamespace} yet; waiting for HostedCluster ${namespace}/${np.spec.clusterName}`,
      SUMMARY_REASONS.controlPlaneMissing,
    );
  }
  const nodePoolName = np.metadata.name ?? '';
  const mirrorName = performanceProfileConfigMapName(first.cm, nodePoolName);
  return {
    reference: {
      kind: 'profile',
      profileName: first.profile,
      statusConfigMapName: statusConfigMapName(mirrorName),
    },
    mirror: {
      namespace: hcpNamespace,
      name: mirrorName,
      nodePoolName,
      nodePoolKey: `${namespace}/${nodePoolName}`,
      tuning: first.tuning,
    },
  };
}
