// Loads a cluster snapshot the way oc's hidden `--mock-clusterversion` flag does: `C-cv.yaml` (a ClusterVersion,
// or a List whose first item is used) and its siblings `C-co.yaml`, `C-mcp.yaml`, `C-mc.yaml`, `C-node.yaml`
// (Lists, required), `C-alerts.json`, `C-mco-deployment.yaml` and `C-mcn.yaml` (optional; the last, a List of
// MachineConfigNodes, is Tessera's: oc reads none). Problems with alerts are not errors: they give the notice oc
// prints (with Go's error text), and health then ignores alerts, like oc.
import { existsSync, readFileSync } from 'node:fs';
import { CORE_SCHEMA, load } from 'js-yaml';
import { type AlertsReading, alertsUnavailableNotice, decodeAlerts } from './alerts.js';
import { mcoImageOf } from './resources.js';
import { SnapshotError } from './errors.js';
import { goFileErrorText } from './goerrors.js';
import type {
  ClusterOperator,
  ClusterSnapshot,
  ClusterVersion,
  Deployment,
  MachineConfig,
  MachineConfigNode,
  MachineConfigPool,
  Node,
} from './inputs.js';
import { isRecord, errorMessage } from '../runtime/light.js';

const CV_SUFFIX = '-cv.yaml';

/**
 * YAML 1.2 core schema (timestamps stay strings, only true/false are booleans), as Kubernetes' decoder reads
 * object dumps. js-yaml, not `yaml`: it parses a 12 MB 5,000-node dump in 0.3-0.6 s, `yaml` in 4.2-4.4 s.
 */
export function parseYaml(text: string): unknown {
  return load(text, { schema: CORE_SCHEMA });
}

/** Paths of the files making up one snapshot case. */
export interface SnapshotPaths {
  readonly clusterVersion: string;
  readonly clusterOperators: string;
  readonly machineConfigPools: string;
  readonly machineConfigs: string;
  readonly nodes: string;
  readonly alerts: string;
  readonly mcoDeployment: string;
  readonly machineConfigNodes: string;
}

export function snapshotPaths(cvPath: string): SnapshotPaths {
  // oc replaces the first occurrence of the suffix, wherever it is.
  const sibling = (suffix: string) => cvPath.replace(CV_SUFFIX, suffix);
  return {
    clusterVersion: cvPath,
    clusterOperators: sibling('-co.yaml'),
    machineConfigPools: sibling('-mcp.yaml'),
    machineConfigs: sibling('-mc.yaml'),
    nodes: sibling('-node.yaml'),
    alerts: sibling('-alerts.json'),
    mcoDeployment: sibling('-mco-deployment.yaml'),
    machineConfigNodes: sibling('-mcn.yaml'),
  };
}

export interface LoadedSnapshot {
  readonly snapshot: ClusterSnapshot;
  /**
   * What oc prints on stdout, before the report, about the alerts file ("" when it read fine): the file is
   * missing or unreadable, or not an alerts response. oc reads alerts only for a cluster that is updating, so
   * print this only then.
   */
  readonly alertsNotice: string;
}

/** The alerts file as oc's `os.ReadFile` + `json.Unmarshal` see it. */
export function readAlertsFile(file: string): AlertsReading {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { alerts: undefined, notice: alertsUnavailableNotice(goFileErrorText(file, err)) };
  }
  return decodeAlerts(text);
}

// Files are read synchronously, one after the other as oc does: parsing blocks anyway, and fs/promises' readFile
// costs a thread-pool round trip per chunk, a measurable part of a small snapshot's whole-process time.
function readYaml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SnapshotError(file, 'cannot be read; every case needs -cv, -co, -mcp, -mc and -node files', {
      cause: err,
    });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new SnapshotError(file, `is not valid YAML: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  if (!isRecord(doc)) throw new SnapshotError(file, 'does not hold a Kubernetes object');
  return doc;
}

function itemsOf<T>(doc: Record<string, unknown>, file: string, kind: string): T[] {
  const docKind = typeof doc.kind === 'string' ? doc.kind : '';
  if (docKind !== 'List' && docKind !== `${kind}List`) {
    throw new SnapshotError(
      file,
      `expected a List of ${kind} objects, found kind ${JSON.stringify(docKind)}`,
    );
  }
  const items = Array.isArray(doc.items) ? doc.items : [];
  items.forEach((item, i) => {
    if (!isRecord(item) || (item.kind !== undefined && item.kind !== kind)) {
      throw new SnapshotError(file, `item ${i} is not a ${kind}`);
    }
  });
  return items as T[];
}

/** Reads the snapshot whose ClusterVersion file is `cvPath`. */
export async function loadSnapshot(cvPath: string): Promise<LoadedSnapshot> {
  const paths = snapshotPaths(cvPath);
  const cvDoc = readYaml(paths.clusterVersion);
  const coDoc = readYaml(paths.clusterOperators);
  const mcpDoc = readYaml(paths.machineConfigPools);
  const mcDoc = readYaml(paths.machineConfigs);
  const nodeDoc = readYaml(paths.nodes);

  let clusterVersion: ClusterVersion;
  if (cvDoc.kind === 'ClusterVersion') {
    clusterVersion = cvDoc as ClusterVersion;
  } else {
    const [first] = itemsOf<ClusterVersion>(cvDoc, paths.clusterVersion, 'ClusterVersion');
    if (first === undefined)
      throw new SnapshotError(paths.clusterVersion, 'the List holds no ClusterVersion');
    clusterVersion = first;
  }

  const { alerts, notice: alertsNotice } = readAlertsFile(paths.alerts);

  let mcoImagePullSpec = '';
  if (existsSync(paths.mcoDeployment)) {
    const deployment = readYaml(paths.mcoDeployment) as Deployment;
    mcoImagePullSpec = mcoImageOf(deployment);
  }
  // Absent: as on a cluster that serves no MachineConfigNodes.
  const machineConfigNodes = existsSync(paths.machineConfigNodes)
    ? itemsOf<MachineConfigNode>(
        readYaml(paths.machineConfigNodes),
        paths.machineConfigNodes,
        'MachineConfigNode',
      )
    : undefined;

  return {
    snapshot: {
      clusterVersion,
      clusterOperators: itemsOf<ClusterOperator>(coDoc, paths.clusterOperators, 'ClusterOperator'),
      machineConfigPools: itemsOf<MachineConfigPool>(mcpDoc, paths.machineConfigPools, 'MachineConfigPool'),
      machineConfigs: itemsOf<MachineConfig>(mcDoc, paths.machineConfigs, 'MachineConfig'),
      nodes: itemsOf<Node>(nodeDoc, paths.nodes, 'Node'),
      machineConfigNodes,
      alerts,
      mcoImagePullSpec,
    },
    alertsNotice,
  };
}

export { mcoImageOf };
