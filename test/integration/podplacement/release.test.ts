// `tessera podplacement release` as an admin (or a tenant) runs it when the controller cannot: on a private
// API-server-only cluster (no controller that could release the pods first), with pods gated as the webhook gates them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import {
  ANNOTATIONS,
  LABELS,
  LABEL_VALUES,
  LEADER_ELECTION_ID,
  MUTATING_WEBHOOK,
  SCHEDULING_GATE,
} from '../../../src/podplacement/constants.js';
import { KubeClient, microTime } from '../../../src/runtime/index.js';
import { startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { serviceAccountKubeConfig } from '../../support/identities.js';
import { runTessera, type TestPod } from './support.js';

const opNs = 'pp-release-operator';
const appNs = 'pp-release-apps';
const otherNs = 'pp-release-other';
const OTHER_GATE = 'example.com/quota';

let cluster: DevCluster | undefined;
let client: KubeClient;
let adminKubeConfig: KubeConfig;
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'pp-release-'));

async function gatedPod(namespace: string, name: string, gates: string[], labelled = true): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/pods`,
    body: {
      metadata: {
        name,
        labels: labelled ? { [LABELS.schedulingGate]: LABEL_VALUES.gated } : {},
      },
      spec: {
        schedulingGates: gates.map((g) => ({ name: g })),
        containers: [{ name: 'c', image: 'registry.example/app:1' }],
      },
    },
  });
}

async function gatesOf(namespace: string, name: string): Promise<{ gates: string[]; label?: string }> {
  const pod = await client.request<TestPod>({
    method: 'GET',
    path: `/api/v1/namespaces/${namespace}/pods/${name}`,
  });
  return {
    gates: (pod.spec.schedulingGates ?? []).map((g) => g.name),
    label: pod.metadata.labels?.[LABELS.schedulingGate],
  };
}

/** A namespace with its default ServiceAccount (no controller-manager on this cluster creates it). */
async function namespace(name: string): Promise<void> {
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${name}/serviceaccounts`,
    body: { metadata: { name: 'default' } },
  });
}

/** The controller's leader Lease, renewed `agoMs` ago (by the holder's clock) by `holder`. */
async function lease(holder: string, agoMs: number, durationSeconds = 15): Promise<void> {
  const path_ = `/apis/coordination.k8s.io/v1/namespaces/${opNs}/leases`;
  await client.request({ method: 'DELETE', path: `${path_}/${LEADER_ELECTION_ID}` }).catch(() => undefined);
  const renewTime = microTime(Date.now() - agoMs);
  await client.request({
    method: 'POST',
    path: path_,
    body: {
      metadata: { name: LEADER_ELECTION_ID },
      spec: {
        holderIdentity: holder,
        leaseDurationSeconds: durationSeconds,
        acquireTime: renewTime,
        renewTime,
      },
    },
  });
}

const release = (kubeconfig: string, ...args: string[]) =>
  runTessera(kubeconfig, 'podplacement', 'release', '--operator-namespace', opNs, ...args);

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-release'));
  adminKubeConfig = await cluster.kubeConfig();
  client = new KubeClient(adminKubeConfig);
  for (const name of [opNs, appNs, otherNs]) await namespace(name);
  await gatedPod(appNs, 'ours', [SCHEDULING_GATE]);
  await gatedPod(appNs, 'ours-and-quota', [OTHER_GATE, SCHEDULING_GATE]);
  await gatedPod(appNs, 'quota-only', [OTHER_GATE], false);
  // Gated without the label (a manifest re-applied with its gate): nothing else would ever release it.
  await gatedPod(appNs, 'ours-unlabelled', [SCHEDULING_GATE], false);
  await gatedPod(otherNs, 'elsewhere', [SCHEDULING_GATE]);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('tessera podplacement release', () => {
  it('refuses while the controller holds its lease, and names the way out', async () => {
    // Renewed 2 s ago and held for an hour: held however long the two CLI runs take to start on a busy machine
    // (with a 15 s Lease a slow start made it look expired, and the command went to its "no longer renews" check).
    await lease('pod-placement-controller-7d9f', 2_000, 3_600);
    const run = await release(cluster?.kubeconfigPath ?? '', '-n', appNs);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the pod placement controller is running');
    expect(run.stderr).toContain('pod-placement-controller-7d9f');
    expect(run.stderr).toContain('--force');
    expect((await gatesOf(appNs, 'ours')).gates).toEqual([SCHEDULING_GATE]);
    // A dry run only warns: it changes nothing anyway.
    const dry = await release(cluster?.kubeconfigPath ?? '', '-n', appNs, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain('warning: the pod placement controller is running');
    expect(dry.stdout).toContain('3 pod(s) would be released');
  });

  it('refuses when the Lease only looks expired (clocks apart) but the controller still renews it', async () => {
    // Written with a renewal time a minute old, as a holder whose clock is behind ours would; renewed meanwhile.
    await lease('pod-placement-controller-7d9f', 60_000, 5);
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${opNs}/leases/${LEADER_ELECTION_ID}`;
    let renewing = true;
    const renewals = (async () => {
      for (let i = 1; renewing; i++) {
        await new Promise((r) => setTimeout(r, 300));
        await client.request({
          method: 'PATCH',
          path: leasePath,
          body: { spec: { renewTime: microTime(Date.now() - 60_000 + i * 300) } },
          contentType: 'application/merge-patch+json',
        });
      }
    })();
    try {
      const run = await release(cluster?.kubeconfigPath ?? '', '-n', appNs);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('checking that the controller no longer renews its Lease');
      expect(run.stderr).toContain('renewed just now');
    } finally {
      renewing = false;
      await renewals;
    }
    expect((await gatesOf(appNs, 'ours')).gates).toEqual([SCHEDULING_GATE]);
  });

  it('says when it finds no controller Lease, and that the webhook still gates new pods', async () => {
    await client.request({
      method: 'POST',
      path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
      body: { metadata: { name: MUTATING_WEBHOOK.configurationName }, webhooks: [] },
    });
    try {
      const run = await release(
        cluster?.kubeconfigPath ?? '',
        '-n',
        otherNs,
        '--dry-run',
        '--operator-namespace',
        'elsewhere',
      );
      expect(run.code).toBe(0);
      expect(run.stderr).toContain('note: no controller Lease elsewhere/');
      expect(run.stderr).toContain('pass --operator-namespace');
      expect(run.stderr).toContain(`${MUTATING_WEBHOOK.configurationName} is still registered`);
    } finally {
      await client.request({
        method: 'DELETE',
        path: `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK.configurationName}`,
      });
    }
  });

  it('needs exactly one of -n and -A, and an empty -n is not every namespace', async () => {
    const run = await release(cluster?.kubeconfigPath ?? '');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('name one namespace with -n NAMESPACE, or every namespace with -A');
    const empty = await release(cluster?.kubeconfigPath ?? '', '-n', '');
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('invalid value for --namespace: must not be empty');
    expect((await gatesOf(otherNs, 'elsewhere')).gates).toEqual([SCHEDULING_GATE]);
  });

  it('with --dry-run, lists what it would release and changes nothing', async () => {
    // Not renewed for a minute, and still not while the command watches it (1 s here): the controller is gone.
    await lease('pod-placement-controller-7d9f', 60_000, 1);
    const run = await release(cluster?.kubeconfigPath ?? '', '-n', appNs, '--dry-run');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `would release ${appNs}/ours (dry run)\nwould release ${appNs}/ours-and-quota (dry run)\n` +
        `would release ${appNs}/ours-unlabelled (dry run)\n3 pod(s) would be released\n`,
    );
    expect((await gatesOf(appNs, 'ours')).gates).toEqual([SCHEDULING_GATE]);
  });

  it("takes a label selector as kubectl does, and passes on the API server's refusal of a bad one", async () => {
    const selected = await release(
      cluster?.kubeconfigPath ?? '',
      '-n',
      appNs,
      '-l',
      `${LABELS.schedulingGate}=${LABEL_VALUES.gated}`,
      '--dry-run',
    );
    expect(selected.stdout).toBe(
      `would release ${appNs}/ours (dry run)\nwould release ${appNs}/ours-and-quota (dry run)\n` +
        '2 pod(s) would be released\n',
    );
    const bad = await release(cluster?.kubeconfigPath ?? '', '-n', appNs, '-l', 'app in (', '--dry-run');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unable to parse requirement|found '\(', expected/);
  });

  it("removes only the operator's gate, in the namespace named, once the controller's lease expired", async () => {
    const before = Date.now() - 1_000; // the annotation has whole seconds
    const run = await release(cluster?.kubeconfigPath ?? '', '-n', appNs);
    const after = Date.now();
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `released ${appNs}/ours\nreleased ${appNs}/ours-and-quota\nreleased ${appNs}/ours-unlabelled\n` +
        '3 pod(s) released\n',
    );
    expect(await gatesOf(appNs, 'ours')).toEqual({ gates: [], label: LABEL_VALUES.removed });
    // Marked, so `explain` tells it from the operator's own release.
    const ours = await client.request<TestPod>({
      method: 'GET',
      path: `/api/v1/namespaces/${appNs}/pods/ours`,
    });
    const releasedAt = Date.parse(ours.metadata.annotations?.[ANNOTATIONS.releasedByHand] ?? '');
    expect(releasedAt).toBeGreaterThanOrEqual(before);
    expect(releasedAt).toBeLessThanOrEqual(after);
    // Another controller's gate stays: that pod is still held, by its own owner.
    expect(await gatesOf(appNs, 'ours-and-quota')).toEqual({
      gates: [OTHER_GATE],
      label: LABEL_VALUES.removed,
    });
    expect((await gatesOf(appNs, 'quota-only')).gates).toEqual([OTHER_GATE]);
    expect((await gatesOf(otherNs, 'elsewhere')).gates).toEqual([SCHEDULING_GATE]);
    // Run again: nothing left to do.
    expect((await release(cluster?.kubeconfigPath ?? '', '-n', appNs)).stdout).toBe('0 pod(s) released\n');
  });

  it("a tenant releases its own namespace's pods with its own rights, and no more", async () => {
    const tenantNs = 'pp-release-tenant';
    await namespace(tenantNs);
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${tenantNs}/serviceaccounts`,
      body: { metadata: { name: 'dev' } },
    });
    await client.request({
      method: 'POST',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${tenantNs}/roles`,
      body: {
        metadata: { name: 'pods' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'patch'] }],
      },
    });
    await client.request({
      method: 'POST',
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${tenantNs}/rolebindings`,
      body: {
        metadata: { name: 'pods' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pods' },
        subjects: [{ kind: 'ServiceAccount', name: 'dev', namespace: tenantNs }],
      },
    });
    await gatedPod(tenantNs, 'mine', [SCHEDULING_GATE]);
    const kubeconfig = path.join(stateDir, 'tenant.kubeconfig');
    writeFileSync(
      kubeconfig,
      (await serviceAccountKubeConfig(adminKubeConfig, client, tenantNs, 'dev')).exportConfig(),
    );

    const own = await release(kubeconfig, '-n', tenantNs);
    expect(own.code).toBe(0);
    // It cannot read the operator's Lease: told so, and not stopped.
    expect(own.stderr).toContain('cannot read the controller');
    // Nor the cluster's webhook configurations: told that it could not check whether new pods are still gated, and why.
    expect(own.stderr).toMatch(
      /could not check whether the mutating webhook configuration \S+ is still registered \(.*forbidden/i,
    );
    expect(own.stdout).toBe(`released ${tenantNs}/mine\n1 pod(s) released\n`);

    const everywhere = await release(kubeconfig, '-A');
    expect(everywhere.code).toBe(1);
    expect(everywhere.stderr).toMatch(/forbidden/i);
    expect(everywhere.stderr).toContain('name one you may with -n NAMESPACE');
    expect((await gatesOf(otherNs, 'elsewhere')).gates).toEqual([SCHEDULING_GATE]);
  });
});
