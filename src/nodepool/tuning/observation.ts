// What the status writer observed of a profile's components in the hosted cluster, as profile-status.ts takes it:
// Nodes of the NodePool and Tuned Profiles (from caches), the NTO-generated KubeletConfig ConfigMap's conditions,
// or, when the hosted cluster is out of reach, NTO's wording for failing to list Tuned Profiles.
import { metaTime, errorMessage } from '../../runtime/index.js';
import type { ConfigMap, Node, TunedProfile } from '../api/types.js';
import { parseWithinBudget, TUNING_YAML_BUDGET } from '../bounded-yaml.js';
import { DATA_KEYS } from '../constants.js';
import { TunedProfiles } from '../resources.js';
import { refOf } from '../status-configmap.js';
import type { ComponentObservation, KubeletConfigCondition, Observed } from './profile-status.js';

export interface CachedComponents {
  readonly nodes: readonly Node[];
  readonly tunedProfiles: readonly TunedProfile[];
  /** The NTO-generated KubeletConfig ConfigMap of the profile, if any. */
  readonly kubeletConfig?: ConfigMap;
}

/** The observation from readable hosted caches. */
export function observeComponents(cached: CachedComponents): ComponentObservation {
  const nodeNames = cached.nodes.map((n) => n.metadata.name ?? '');
  return {
    nodeNames: { ok: true, value: nodeNames },
    tunedProfiles: { ok: true, value: cached.tunedProfiles },
    ...(cached.kubeletConfig ? { kubeletConfig: kubeletConfigConditions(cached.kubeletConfig) } : {}),
  };
}

/**
 * NTO's wording when Tuned Profiles cannot be listed; the reflector and the probe log the underlying API error.
 * The message stays the same while the outage lasts, so it is written once, not on every look.
 */
export function unreadableObservation(
  profileName: string,
  lastContact: number | undefined,
  graceMs: number,
): ComponentObservation {
  const since =
    lastContact === undefined ? 'no successful read yet' : `last successful read at ${metaTime(lastContact)}`;
  const error =
    `Cannot list Tuned Profiles to match with profile ${profileName}: the hosted cluster's Nodes and Tuned ` +
    `Profiles could not be read for over ${Math.round(graceMs / 1000)}s (${since}); ` +
    `check that it is reachable and serves ${TunedProfiles.group}/${TunedProfiles.version} ${TunedProfiles.plural}`;
  return { nodeNames: { ok: false, error }, tunedProfiles: { ok: false, error } };
}

/** KubeletConfig conditions out of an NTO-generated ConfigMap (`config` key); a bad manifest is a read failure. */
export function kubeletConfigConditions(cm: ConfigMap): Observed<{ conditions: KubeletConfigCondition[] }> {
  try {
    const manifest = parseWithinBudget(
      cm.data?.[DATA_KEYS.config] ?? '',
      TUNING_YAML_BUDGET,
      `key "${DATA_KEYS.config}"`,
    ) as { status?: { conditions?: unknown } } | null;
    const raw = manifest?.status?.conditions;
    if (raw === undefined || raw === null) return { ok: true, value: { conditions: [] } };
    if (!Array.isArray(raw))
      return { ok: false, error: `KubeletConfig in ConfigMap ${refOf(cm)}: status.conditions is not a list` };
    const conditions = raw.filter(
      (c): c is KubeletConfigCondition =>
        typeof c === 'object' && c !== null && typeof (c as { type?: unknown }).type === 'string',
    );
    return { ok: true, value: { conditions } };
  } catch (err) {
    return {
      ok: false,
      error: `cannot decode KubeletConfig in ConfigMap ${refOf(cm)}: ${errorMessage(err)}`,
    };
  }
}
