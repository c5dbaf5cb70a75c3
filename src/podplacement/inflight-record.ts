// The record of pods whose images are being inspected, as the controller keeps it in a ConfigMap of its namespace
// so that the next controller process (after a crash, perhaps in another pod) knows which pods were in flight.
// Pure: encoding, decoding within a byte budget, and the ConfigMap the record is written as.
// Format: the data key `pods`, one line per pod, `NAMESPACE/NAME UID`, sorted. Lines that are not a valid pod
// reference are skipped (the ConfigMap is the operator's, but an admin may edit it), and decoding stops at the
// budget, so a huge or garbled record can neither stall the start of the next process nor release other pods.
import type { KubeObject } from '../runtime/index.js';

/** The ConfigMap in the operator namespace (get and update by name; create cannot be restricted by name). */
export const INFLIGHT_RECORD_NAME = 'pod-placement-inspections-in-flight';
export const INFLIGHT_RECORD_KEY = 'pods';

/**
 * Longest line: a namespace (DNS label, 63), a pod name (DNS subdomain, 253), a uid (36 for the API server's UUIDs;
 * up to 64 accepted), the separators and the newline.
 */
export const MAX_ENTRY_BYTES = 63 + 1 + 253 + 1 + 64 + 1;

/** The ConfigMap's own limit is 1 MiB; the record stays far below it. */
const CONFIGMAP_LIMIT_BYTES = 1024 * 1024;

/**
 * The record's byte budget for `maxInFlight` concurrent inspections: room for the pods in flight now and as many
 * carried over from the process before (at 8 workers: 6 KiB).
 */
export function recordBudgetBytes(maxInFlight: number): number {
  return Math.min(CONFIGMAP_LIMIT_BYTES / 2, 2 * maxInFlight * MAX_ENTRY_BYTES);
}

/** One pod: its `namespace/name` key and uid (a pod deleted and created again under the name is another pod). */
export interface InFlightEntry {
  readonly key: string;
  readonly uid: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const UID = /^[0-9a-zA-Z-]{1,64}$/;

function parseLine(line: string): InFlightEntry | undefined {
  const space = line.indexOf(' ');
  const slash = line.indexOf('/');
  if (space < 0 || slash < 0 || slash > space) return undefined;
  const namespace = line.slice(0, slash);
  const name = line.slice(slash + 1, space);
  const uid = line.slice(space + 1);
  if (!DNS_LABEL.test(namespace) || !DNS_SUBDOMAIN.test(name) || !UID.test(uid)) return undefined;
  return { key: `${namespace}/${name}`, uid };
}

export interface DecodedRecord {
  readonly entries: InFlightEntry[];
  /** Lines skipped as invalid, and whether the record went beyond the budget (the rest was not read). */
  readonly invalid: number;
  readonly truncated: boolean;
}

/** The entries of a record's text, reading at most `budgetBytes` of it (UTF-16 units: the text is ASCII). */
export function decodeInFlightRecord(text: string | undefined, budgetBytes: number): DecodedRecord {
  if (!text) return { entries: [], invalid: 0, truncated: false };
  const truncated = text.length > budgetBytes;
  const lines = (truncated ? text.slice(0, text.lastIndexOf('\n', budgetBytes) + 1) : text).split('\n');
  const seen = new Set<string>();
  const entries: InFlightEntry[] = [];
  let invalid = 0;
  for (const line of lines) {
    if (line === '') continue;
    const entry = parseLine(line);
    if (entry === undefined) invalid++;
    else if (!seen.has(entry.key)) {
      seen.add(entry.key);
      entries.push(entry);
    }
  }
  return { entries, invalid, truncated };
}

/** The record's text for `entries` (each key once, sorted, so the same set is always the same text). */
export function encodeInFlightRecord(entries: Iterable<InFlightEntry>): string {
  const byKey = new Map<string, string>();
  for (const e of entries) byKey.set(e.key, e.uid);
  return [...byKey]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, uid]) => `${key} ${uid}\n`)
    .join('');
}

export interface InFlightRecordConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** The whole ConfigMap written for `text` (an unconditional update: only the leader writes it). */
export function inFlightRecordConfigMap(namespace: string, text: string): InFlightRecordConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: INFLIGHT_RECORD_NAME,
      namespace,
      labels: { 'app.kubernetes.io/part-of': 'tessera', 'app.kubernetes.io/component': 'pod-placement' },
      annotations: {
        'multiarch.openshift.io/description':
          'Pods whose images the pod placement controller is inspecting. A pod listed here when a controller ' +
          'process starts was in flight when the previous one stopped: it is released without inspection.',
      },
    },
    data: { [INFLIGHT_RECORD_KEY]: text },
  };
}
