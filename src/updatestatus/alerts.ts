// Alert insights (oc's rules): firing alerts that started during the update, plus allow-listed alerts known to
// affect updates whatever their start; pending alerts and info-level alerts are left out.
// Pure: `updateStartedAt` is passed in.
import { type Instant, GO_ZERO_TIME, parseTime } from './gotime.js';
import type { AlertData } from './inputs.js';
import { CONFIG_GROUP, ImpactLevel, type UpdateInsight } from './insight.js';

/** Alerts shown even when they fired before the update began. */
const ALERTS_AFFECTING_UPDATES = new Set(['PodDisruptionBudgetLimit', 'PodDisruptionBudgetAtLimit']);

function levelOfSeverity(severity: string | undefined): ImpactLevel {
  if (severity === 'warning') return ImpactLevel.Warning;
  if (severity === 'critical') return ImpactLevel.Critical;
  return ImpactLevel.Info;
}

export function alertInsights(alertData: AlertData, updateStartedAt: Instant): UpdateInsight[] {
  const insights: UpdateInsight[] = [];
  for (const alert of alertData.data?.alerts ?? []) {
    const name = alert.labels?.alertname ?? '';
    if (name === '') continue;
    const activeAt = parseTime(alert.activeAt) ?? GO_ZERO_TIME;
    const startedDuringUpdate = updateStartedAt < activeAt;
    let description: string;
    if (ALERTS_AFFECTING_UPDATES.has(name)) {
      description = startedDuringUpdate
        ? 'Alert known to affect updates started firing during the update.'
        : 'Alert known to affect updates has been firing since before the update started.';
    } else if (startedDuringUpdate) {
      description = 'Alert started firing during the update.';
    } else {
      continue;
    }
    if (alert.state === 'pending') continue;
    const level = levelOfSeverity(alert.labels?.severity);
    if (level < ImpactLevel.Warning) continue;

    const annotations = alert.annotations ?? {};
    const alertDescription = annotations.description ?? '';
    const alertMessage = annotations.message ?? '';
    if (alertMessage !== '' && alertDescription !== '') {
      description += ` The alert description is: ${alertDescription} | ${alertMessage}`;
    } else if (alertDescription !== '') {
      description += ` The alert description is: ${alertDescription}`;
    } else if (alertMessage !== '') {
      description += ` The alert description is: ${alertMessage}`;
    } else {
      description += ' The alert has no description.';
    }
    insights.push({
      startedAt: activeAt,
      scope: {
        type: 'Cluster',
        resources: [
          {
            group: CONFIG_GROUP,
            kind: 'Alert',
            ...(alert.labels?.namespace ? { namespace: alert.labels.namespace } : {}),
            name,
          },
        ],
      },
      impact: {
        level,
        type: 'Unknown',
        summary: `Alert is firing: ${annotations.summary || name}`,
        description,
      },
      remediation: { reference: annotations.runbook_url || '<alert does not have a runbook_url annotation>' },
    });
  }
  return insights;
}
