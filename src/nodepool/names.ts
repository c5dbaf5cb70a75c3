// Naming rules shared by HyperShift and the Node Tuning Operator, as pure functions.
// Guarantees: byte-for-byte the names the reference projects compute (FNV-32a hashes, 63-character shortening),
// so objects written by either implementation are found by the other.
import {
  NTO_NAMESPACE,
  PP_CONFIGMAP_NAME_MAX,
  RUNTIME_CLASS_PREFIX,
  STATUS_CONFIGMAP_PREFIX,
  TUNED_PROFILE_NAME_PREFIX,
} from './constants.js';

/** FNV-1a 32-bit hash of the UTF-8 bytes of `s`, as 8 lower-case hex digits. */
export function fnv32aHex(s: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(s)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * `<base>-<suffix>`, or when longer than `maxLength` a name that keeps the suffix and replaces the tail of the base
 * with a hash of it (HyperShift's netutil.ShortenName).
 */
export function shortenName(base: string, suffix: string, maxLength: number): string {
  if (maxLength <= 0) return '';
  const name = `${base}-${suffix}`;
  if (name.length <= maxLength) return name;
  const baseLength = maxLength - 10 - suffix.length;
  if (baseLength < 0) {
    const prefix = base.slice(0, Math.min(base.length, Math.max(0, maxLength - 9)));
    return `${prefix}-${fnv32aHex(name)}`.slice(0, maxLength);
  }
  return `${base.slice(0, baseLength)}-${fnv32aHex(base)}-${suffix}`;
}

/** The hosted control plane namespace of a HostedCluster: `<namespace>-<name with '.' replaced by '-'>`. */
export function hostedControlPlaneNamespace(
  hostedClusterNamespace: string,
  hostedClusterName: string,
): string {
  return `${hostedClusterNamespace}-${hostedClusterName.replaceAll('.', '-')}`;
}

/** Name of the NodePool controller's mirror of the user's tuning ConfigMap in the HCP namespace. */
export function performanceProfileConfigMapName(tuningConfigMapName: string, nodePoolName: string): string {
  return shortenName(tuningConfigMapName, nodePoolName, PP_CONFIGMAP_NAME_MAX);
}

/** Name of the status ConfigMap NTO writes for a PerformanceProfile ConfigMap in the HCP namespace. */
export function statusConfigMapName(ppConfigMapName: string): string {
  return `${STATUS_CONFIGMAP_PREFIX}-${ppConfigMapName}`;
}

/** The Tuned NTO generates for a profile in a NodePool: `openshift-node-performance-<profile>-<fnv(nodePool)>`. */
export function performanceTunedName(profileName: string, nodePoolName: string): string {
  return `${TUNED_PROFILE_NAME_PREFIX}-${profileName}-${fnv32aHex(nodePoolName)}`;
}

/** `status.tuned` of a PerformanceProfile: `<NTO namespace>/<performance Tuned name>`. */
export function tunedStatusReference(profileName: string, nodePoolName: string): string {
  return `${NTO_NAMESPACE}/${performanceTunedName(profileName, nodePoolName)}`;
}

/** `status.runtimeClass` of a PerformanceProfile: `performance-<profile>`. */
export function runtimeClassName(profileName: string): string {
  return `${RUNTIME_CLASS_PREFIX}-${profileName}`;
}

/** "namespace/name" -> name; a bare "name" stays as it is (NTO's parseNamespacedName). */
export function nameOfNamespacedName(namespacedName: string): string {
  const slash = namespacedName.indexOf('/');
  return slash >= 0 ? namespacedName.slice(slash + 1) : namespacedName;
}
