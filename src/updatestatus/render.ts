// Renders an UpdateStatusReport as `oc adm upgrade status` prints it, byte for byte: sections, tabwriter tables,
// Go number and duration formatting. Pure; no assessment happens here, only presentation choices (which
// details to expand, how many nodes to list).
import type { UpdateStatusReport } from './assess.js';
import type { ControlPlaneStatus, VersionSummary } from './controlplane.js';
import {
  type Duration,
  type Instant,
  MINUTE,
  SECOND,
  formatDuration,
  formatRFC3339,
  isZeroTime,
  parseDuration,
  sub,
  truncateDuration,
} from './gotime.js';
import { ellipsis, formatFloat0, padRight } from './gofmt.js';
import type { UpdateHealth } from './health.js';
import { ImpactLevel, impactLevelName } from './insight.js';
import { formatTable } from './tabwriter.js';
import {
  type NodeStatus,
  type PoolStatus,
  countNodes,
  nodeAssessmentName,
  nodePhaseName,
} from './workerpool.js';

/** Which sections show details, as `--details` selects. */
export type DetailsLevel = 'none' | 'all' | 'nodes' | 'health' | 'operators';
export const DETAILS_LEVELS: readonly DetailsLevel[] = ['none', 'all', 'nodes', 'health', 'operators'];

/** oc's compact duration: "1h2m" not "1h2m0s", "5m" not "5m0s", whole seconds only, "now" for zero. */
export function shortDuration(d: Duration): string {
  const orig = formatDuration(d);
  if (orig === '0h0m0s' || orig === '0s') return 'now';
  if (orig.endsWith('h0m0s')) return orig.slice(0, -4);
  if (orig.endsWith('m0s')) return orig.slice(0, -2);
  if (orig.endsWith('h0m')) return orig.slice(0, -2);
  const dot = orig.indexOf('.');
  if (dot !== -1) {
    // Dropping the fraction keeps the unit "s" even for sub-second values ("368.9µs" -> "368s"), as oc does.
    const reparsed = parseDuration(`${orig.slice(0, dot)}s`);
    return reparsed === undefined ? orig : shortDuration(reparsed);
  }
  return orig;
}

export function versionsText(v: VersionSummary): string {
  if (v.isTargetInstall) return `${v.target} (a new install)`;
  if (v.isPreviousPartial) return `${v.target} (from incomplete ${v.previous})`;
  if (v.isMultiArchMigration) return `${v.target} to Multi-Architecture`;
  return `${v.target} (from ${v.previous})`;
}

export function vagueUnder(actual: Duration, estimated: Duration, isMultiArchMigration: boolean): string {
  if (isMultiArchMigration) return 'N/A for Multi-Architecture Migration';
  if (actual < -10n * MINUTE) return `N/A; estimate duration was ${shortDuration(estimated)}`;
  if (actual < 10n * MINUTE) return `<${shortDuration(10n * MINUTE)}`;
  return shortDuration(actual);
}

function operatorHealthSummary(cp: ControlPlaneStatus): string {
  const o = cp.operators;
  const parts = [`${o.total - o.unavailable - o.degraded} Healthy`];
  if (o.unavailable > 0) parts.push(`${o.unavailable} Unavailable`);
  if (o.degraded > 0) parts.push(`${o.degraded} Available but degraded`);
  return parts.join(', ');
}

export function renderControlPlane(cp: ControlPlaneStatus, detailed: boolean, now: Instant): string {
  const o = cp.operators;
  if (o.updated === o.total) {
    return `= Control Plane =\nUpdate to ${cp.versions.target} successfully completed at ${formatRFC3339(cp.completionAt)} (duration: ${shortDuration(cp.duration)})\n`;
  }
  let out = '= Control Plane =\n';
  out += `Assessment:      ${cp.assessment}\n`;
  out += `Target Version:  ${versionsText(cp.versions)}\n`;
  const updatingNames = o.updating.map((u) => u.name).join(', ');
  if (updatingNames !== '') out += `Updating:        ${updatingNames}\n`;
  out += `Completion:      ${formatFloat0(cp.completion)}% (${o.updated} operators updated, ${o.updating.length} updating, ${o.waiting} waiting)\n`;
  out += `Duration:        ${shortDuration(cp.duration)}`;
  if (cp.estimatedTimeToComplete !== 0n) {
    out += ` (Est. Time Remaining: ${vagueUnder(cp.estimatedTimeToComplete, cp.estimatedDuration, cp.versions.isMultiArchMigration)})`;
  }
  out += '\n';
  out += `Operator Health: ${operatorHealthSummary(cp)}\n`;
  if (detailed && o.updating.length > 0) {
    let table = '\nNAME\tSINCE\tREASON\tMESSAGE\n';
    for (const u of o.updating) {
      const [first = '', ...rest] = u.message.split('\n');
      table += `${u.name}\t${shortDuration(sub(now, u.since))}\t${ellipsis(u.reason || '-', 20)}\t${first}\n`;
      for (const line of rest) table += `\t\t\t${line}\n`;
    }
    out += `\nUpdating Cluster Operators${formatTable(table)}`;
  }
  return out;
}

export function renderPools(pools: readonly PoolStatus[]): string {
  let table = '\nWORKER POOL\tASSESSMENT\tCOMPLETION\tSTATUS\n';
  for (const pool of pools) {
    const ov = pool.overview;
    if (pool.nodes.length === 0) {
      table += `${pool.name}\tEmpty\t\t${ov.total} Total\n`;
      continue;
    }
    let status = `${ov.available} Available, ${ov.progressing} Progressing, ${ov.draining} Draining`;
    // oc ranges over a Go map here, so with both counts present its order varies between runs; we fix one.
    if (ov.excluded > 0) status += `, ${ov.excluded} Excluded`;
    if (ov.degraded > 0) status += `, ${ov.degraded} Degraded`;
    table += `${pool.name}\t${pool.assessment}\t${formatFloat0(pool.completion)}% (${ov.total - ov.outdated}/${ov.total})\t${status}\n`;
  }
  return formatTable(table);
}

/** Nodes shown before the rest are summarised, unless details are on (troubled nodes are always shown). */
const NODES_SHOWN = 10;

export function renderPoolNodes(pool: PoolStatus, detailed: boolean): string {
  if (pool.nodes.length === 0) return '';
  let out: string;
  if (pool.name === 'master') {
    if (pool.completion === 100) {
      return `\nAll control plane nodes successfully updated to ${pool.nodes[0]?.version ?? ''}\n`;
    }
    out = '\nControl Plane Nodes';
  } else {
    out = `\nWorker Pool Nodes: ${pool.name}`;
  }
  let table = '\nNAME\tASSESSMENT\tPHASE\tVERSION\tEST\tMESSAGE\n';
  const omitted: NodeStatus[] = [];
  pool.nodes.forEach((node, i) => {
    if (!detailed && i >= NODES_SHOWN && !node.isDegraded && (!node.isUnavailable || node.isUpdating)) {
      omitted.push(node);
      return;
    }
    table += `${node.name}\t${nodeAssessmentName(node.assessment)}\t${nodePhaseName(node.phase)}\t${node.version || '?'}\t${node.estimate}\t${node.message}\n`;
  });
  out += formatTable(table);
  const counted = countNodes(omitted);
  let { total, completed, available, progressing, draining, excluded } = counted;
  let outdated = counted.total - counted.completed;
  const unlisted = pool.unlisted;
  if (unlisted && unlisted.total > 0) {
    total += unlisted.total;
    completed += unlisted.completed;
    available += unlisted.available;
    progressing += unlisted.progressing;
    outdated += unlisted.outdated;
    draining += unlisted.draining;
    excluded += unlisted.excluded;
  }
  if (total > 0) {
    out += `...\nOmitted additional ${total} Total, ${completed} Completed, ${available} Available, ${progressing} Progressing, ${outdated} Outdated, ${draining} Draining, ${excluded} Excluded, and 0 Degraded nodes.\nPass along --details=nodes to see all information.\n`;
  }
  return out;
}

export interface HealthItem {
  readonly since: string;
  readonly level: string;
  readonly impact: string;
  readonly message: string;
  readonly description: string;
  readonly reference: string;
  /** Byte length of the longest "kinds: " label. */
  readonly kindPad: number;
  /** One label per resource, duplicates kept (as oc lists them). */
  readonly kinds: string[];
  readonly resources: Map<string, string[]>;
}

export function healthItems(health: UpdateHealth): HealthItem[] {
  return health.insights.map((insight) => {
    const kinds: string[] = [];
    const resources = new Map<string, string[]>();
    let kindPad = 0;
    for (const r of insight.scope.resources) {
      let kind = `${r.kind.toLowerCase()}s`;
      if (r.group !== '') kind = `${kind}.${r.group}`;
      kind = `${kind}: `;
      kindPad = Math.max(kindPad, utf8.encode(kind).length);
      kinds.push(kind);
      const names = resources.get(kind) ?? [];
      names.push(r.namespace ? `${r.namespace}/${r.name}` : r.name);
      resources.set(kind, names);
    }
    return {
      since: isZeroTime(insight.startedAt)
        ? '-'
        : shortDuration(truncateDuration(sub(health.evaluatedAt, insight.startedAt), SECOND)),
      level: impactLevelName(insight.impact.level),
      impact: insight.impact.type,
      message: insight.impact.summary,
      description: insight.impact.description,
      reference: insight.remediation.reference,
      kindPad,
      kinds,
      resources,
    };
  });
}

/** Go's byte-wise string order (sort.Strings), which differs from UTF-16 order outside the BMP. */
function byteOrder(a: string, b: string): number {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return x.length - y.length;
}

/** TextEncoder rather than Node's Buffer: the dashboard's console plugin renders these in the browser. */
const utf8 = new TextEncoder();

export function renderHealth(health: UpdateHealth, detailed: boolean): string {
  const items = healthItems(health);
  let out = '= Update Health =\n';
  if (detailed) {
    const pad = 'Description: '.length;
    items.forEach((item, i) => {
      out += `Message: ${item.message}\n`;
      out += `  ${padRight('Since:', pad)}${item.since}\n`;
      out += `  ${padRight('Level:', pad)}${item.level}\n`;
      out += `  ${padRight('Impact:', pad)}${item.impact}\n`;
      out += `  ${padRight('Reference:', pad)}${item.reference}\n`;
      if (item.kinds.length > 0) {
        out += '  Resources:\n';
        for (const kind of [...item.kinds].sort(byteOrder)) {
          const names = [...(item.resources.get(kind) ?? [])].sort(byteOrder);
          out += `    ${padRight(kind, item.kindPad)}${names.join(', ')}\n`;
        }
      }
      const description = item.description.split('\n').join(`\n${' '.repeat(pad + 2)}, `);
      out += `  ${padRight('Description:', pad)}${description}\n`;
      if (i + 1 < items.length) out += '\n';
    });
    return out;
  }
  let table = 'SINCE\tLEVEL\tIMPACT\tMESSAGE\n';
  for (const item of items) table += `${item.since}\t${item.level}\t${item.impact}\t${item.message}\n`;
  out += formatTable(table);
  if (items.length > 1 || items[0]?.level !== impactLevelName(ImpactLevel.Info)) {
    out +=
      '\nRun with --details=health for additional description and links to related online documentation\n';
  }
  return out;
}

/** The full `oc adm upgrade status` output for `details`. */
export function renderUpdateStatus(report: UpdateStatusReport, details: DetailsLevel): string {
  if (!report.updating) return 'The cluster is not updating.\n';
  const enabled = (what: DetailsLevel) => details === 'all' || details === what;
  let out = renderControlPlane(report.controlPlane, enabled('operators'), report.evaluatedAt);
  if (report.controlPlanePool) out += renderPoolNodes(report.controlPlanePool, enabled('nodes'));
  if (report.workerPools.some((p) => p.nodes.length > 0)) {
    out += '\n= Worker Upgrade =\n';
    out += renderPools(report.workerPools);
    for (const pool of report.workerPools) out += renderPoolNodes(pool, enabled('nodes'));
  }
  out += '\n';
  out += renderHealth(report.health, report.health.hasDetails && enabled('health'));
  return out;
}
