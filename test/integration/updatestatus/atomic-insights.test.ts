// The insight lists are atomic in Tessera's CRD (each informer's list has one writer), where the CRD before, like
// the reference API, declared them maps keyed by uid. On a real API server: an UpdateStatus written under the old
// CRD keeps working once the new one is installed (each informer's apply replaces its own list and leaves the
// others' intact), and an informer's managedFields then name its list once instead of every field of every insight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { KubeClient } from '../../../src/runtime/client.js';
import { applyCrds } from '../../../src/runtime/crds.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import { updateStatusCrd } from '../../../src/updatestatus/api/crd.js';
import { UpdateStatuses, installUpdateStatusCrd } from '../../../src/updatestatus/api/install.js';
import {
  type InformerContribution,
  applyConfiguration,
  informerFieldManager,
} from '../../../src/updatestatus/api/informers.js';
import type { ControlPlaneInsight, UpdateStatus } from '../../../src/updatestatus/api/schema.js';
import { applyCreatingObject } from '../../../src/updatestatus/informer.js';
import { eventually, startApiServerOnlyTestCluster } from '../../support/cluster.js';

type Stored = UpdateStatus & KubeObject;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function finding(summary: string): ControlPlaneInsight {
  return {
    type: 'Health',
    health: {
      startedAt: iso(Date.now() - 60_000),
      scope: { type: 'ControlPlane', resources: [] },
      impact: { level: 'Warning', type: 'Update Speed', summary, description: 'Details.' },
      remediation: { reference: 'https://example.com/runbook' },
    },
  };
}

/** Informer `name` reporting one finding per uid, in the control plane and in pool `worker`. */
function contribution(name: string, uids: readonly string[]): InformerContribution {
  const entries = uids.map((uid) => ({
    uid,
    acquiredAt: iso(Date.now()),
    insight: finding(`${name} finds ${uid}`),
  }));
  return {
    name,
    controlPlane: entries,
    workerPools: [
      {
        name: 'worker',
        resource: {
          group: 'machineconfiguration.openshift.io',
          resource: 'machineconfigpools',
          name: 'worker',
        },
        insights: entries.map((e) => ({ ...e, insight: { ...e.insight, type: 'Health' as const } })),
      },
    ],
  };
}

/** The CRD as it was: every informer's insight list a map keyed by uid. */
function crdWithInsightMaps(): KubeObject {
  const crd = updateStatusCrd() as unknown as KubeObject;
  const visit = (node: unknown, key: string): void => {
    if (node === null || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    if (key === 'insights' && schema.type === 'array') {
      schema['x-kubernetes-list-type'] = 'map';
      schema['x-kubernetes-list-map-keys'] = ['uid'];
    }
    for (const [k, v] of Object.entries(schema)) visit(v, k);
  };
  visit(crd, '');
  return crd;
}

describe('atomic insight lists on a live API server', () => {
  let cluster: DevCluster;
  let client: KubeClient;
  let statuses: ResourceClient<Stored>;

  const apply = (c: InformerContribution) =>
    applyCreatingObject(statuses, applyConfiguration(c, iso(Date.now())), informerFieldManager(c.name));
  const uidsOf = (s: Stored, informer: string) => ({
    controlPlane: (s.status?.controlPlane?.informers?.find((i) => i.name === informer)?.insights ?? []).map(
      (x) => x.uid,
    ),
    worker: (
      s.status?.workerPools?.find((p) => p.name === 'worker')?.informers?.find((i) => i.name === informer)
        ?.insights ?? []
    ).map((x) => x.uid),
  });
  const managedFieldsOf = (s: Stored, informer: string) =>
    JSON.stringify(
      (s.metadata as { managedFields?: { manager?: string; fieldsV1?: unknown }[] }).managedFields?.find(
        (f) => f.manager === informerFieldManager(informer),
      )?.fieldsV1,
    );

  beforeAll(async () => {
    cluster = await startApiServerOnlyTestCluster('updatestatus-atomic-insights');
    client = new KubeClient(await cluster.kubeConfig());
    statuses = new ResourceClient<Stored>(client, UpdateStatuses);
    await applyCrds(client, [crdWithInsightMaps()], { fieldManager: 'tessera-updatestatus' });
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await cluster?.stop({ wipe: true });
  });

  it('keeps each informer to its own entries across the change from map to atomic lists', async () => {
    // Written under the CRD before: two informers, each insight owned field by field.
    await apply(contribution('alpha', ['a1', 'a2']));
    let stored = await apply(contribution('beta', ['b1']));
    expect(managedFieldsOf(stored, 'alpha')).toContain('k:{\\"uid\\":\\"a1\\"}');

    await installUpdateStatusCrd(client);
    // alpha drops a1 and adds a3; beta's entries stay as they are. The API server swaps the resource's handler, and
    // with it the merge rules, a moment after the CRD changes, so alpha applies until the new rules merged it: its
    // managedFields then name the list, not each insight.
    stored = await eventually(
      async () => {
        const merged = await apply(contribution('alpha', ['a2', 'a3']));
        expect(managedFieldsOf(merged, 'alpha')).toContain('"f:insights":{}');
        return merged;
      },
      { what: "an apply merged by the new CRD's atomic insight lists" },
    );
    expect(managedFieldsOf(stored, 'alpha')).not.toContain('uid');
    expect(uidsOf(stored, 'alpha')).toEqual({ controlPlane: ['a2', 'a3'], worker: ['a2', 'a3'] });
    expect(uidsOf(stored, 'beta')).toEqual({ controlPlane: ['b1'], worker: ['b1'] });

    stored = await apply(contribution('beta', ['b2']));
    expect(uidsOf(stored, 'beta')).toEqual({ controlPlane: ['b2'], worker: ['b2'] });
    expect(uidsOf(stored, 'alpha')).toEqual({ controlPlane: ['a2', 'a3'], worker: ['a2', 'a3'] });
    // An informer that reports nothing in a pool any more leaves it; the other's insights there stay.
    stored = await apply({ ...contribution('alpha', ['a4']), workerPools: [] });
    expect(uidsOf(stored, 'alpha')).toEqual({ controlPlane: ['a4'], worker: [] });
    expect(uidsOf(stored, 'beta')).toEqual({ controlPlane: ['b2'], worker: ['b2'] });
  });
});
