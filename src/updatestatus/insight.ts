// The update-insight model shared by every assessor: what happened, since when, to which resources, how bad, and
// where to read more. Assessors only create insights; ranking and display live in health.ts and render.ts.
// An insight without summary, description or reference is "incomplete" and is never shown.
import type { Instant } from './gotime.js';

/** Impact levels, ordered: a higher value is more severe (ranking depends on the order). */
export const ImpactLevel = { Info: 0, Warning: 1, Error: 2, Critical: 3 } as const;
export type ImpactLevel = (typeof ImpactLevel)[keyof typeof ImpactLevel];

export function impactLevelName(level: ImpactLevel): 'Info' | 'Warning' | 'Error' | 'Critical' {
  switch (level) {
    case ImpactLevel.Info:
      return 'Info';
    case ImpactLevel.Warning:
      return 'Warning';
    case ImpactLevel.Error:
      return 'Error';
    case ImpactLevel.Critical:
      return 'Critical';
  }
}

export type ImpactType =
  | 'None'
  | 'Unknown'
  | 'API Availability'
  | 'Cluster Capacity'
  | 'Application Availability'
  | 'Application Outage'
  | 'Data Loss'
  | 'Update Speed'
  | 'Update Stalled';

export type ScopeType = 'ControlPlane' | 'WorkerPool' | 'Cluster';

export interface ScopeResource {
  /** API group; "" for the core group. */
  readonly group: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

export interface UpdateInsight {
  /** When the condition began; `GO_ZERO_TIME` when unknown (shown as "-"). */
  readonly startedAt: Instant;
  readonly scope: { readonly type: ScopeType; readonly resources: readonly ScopeResource[] };
  readonly impact: {
    readonly level: ImpactLevel;
    readonly type: ImpactType;
    readonly summary: string;
    readonly description: string;
  };
  readonly remediation: { readonly reference: string };
}

export function isIncomplete(insight: UpdateInsight): boolean {
  return (
    insight.impact.summary === '' || insight.impact.description === '' || insight.remediation.reference === ''
  );
}

export const CONFIG_GROUP = 'config.openshift.io';
export const MACHINECONFIG_GROUP = 'machineconfiguration.openshift.io';
