// A controller that crash-loops must not turn gating into an outage of every covered namespace. On a real API
// server (private cluster: the config is a singleton), with the operator as a separate process:
//  1. the poison-pod breaker: the controller is SIGKILLed while it inspects a pod whose registry never answers (the
//     stand-in for an image that kills the process); the next process releases that pod without inspecting it
//     (fallback architecture, annotation, Warning event) and never contacts that registry again;
//  2. the webhook stops gating when the controller's Lease has not been renewed for the threshold set by flag
//     (3 s here), says so in a Warning event on the Lease, and gates again while the Lease is renewed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import {
  ANNOTATIONS,
  ARCH_LABEL,
  EVENT_REASONS,
  LEADER_ELECTION_ID,
  SCHEDULING_GATE,
} from '../../../src/podplacement/constants.js';
import { INFLIGHT_RECORD_NAME } from '../../../src/podplacement/inflight-record.js';
import { RELEASED_UNINSPECTED_MESSAGE } from '../../../src/podplacement/inspection-breaker.js';
import { GATING_EVENT_REASONS } from '../../../src/podplacement/operator/controller-lease-watch.js';
import type { Pod } from '../../../src/podplacement/pod-types.js';
import { KubeClient, microTime } from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { createClusterPodPlacementConfig } from '../../support/placement.js';
import { startSilentRegistry, type SilentRegistry } from '../../support/silent-registry.js';
import { freePort, startOperatorProcess, type OperatorProcess } from '../podplacement/support.js';

const opNs = 'pp-crash-operator';
const tenant = 'pp-crash-tenant';

let cluster: DevCluster | undefined;
let client: KubeClient;
let silent: SilentRegistry;
let webhookPort = 0;
const processes: OperatorProcess[] = [];

interface CoreEvent {
  reason?: string;
  type?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

const podPath = (name: string) => `/api/v1/namespaces/${tenant}/pods/${name}`;
const gated = (p: Pod) => (p.spec?.schedulingGates ?? []).some((g) => g.name === SCHEDULING_GATE);

async function createPod(image: string): Promise<Pod> {
  return client.request<Pod>({
    method: 'POST',
    path: `/api/v1/namespaces/${tenant}/pods`,
    body: { metadata: { name: uniqueName('p') }, spec: { containers: [{ name: 'c', image }] } },
  });
}

function operator(extraArgs: string[], components: 'all' | 'webhook' = 'all'): OperatorProcess {
  const p = startOperatorProcess({
    kubeconfigPath: cluster?.kubeconfigPath ?? '',
    namespace: opNs,
    globalPullSecretNamespace: opNs,
    registryCaFiles: [],
    webhookPort,
    components,
    extraArgs,
  });
  processes.push(p);
  return p;
}

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-crash'));
  client = new KubeClient(await cluster.kubeConfig());
  for (const name of [opNs, tenant])
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  // No controller-manager here: the ServiceAccount admission plugin needs the tenant's default account.
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${tenant}/serviceaccounts`,
    body: { metadata: { name: 'default' } },
  });
  silent = await startSilentRegistry();
  webhookPort = await freePort();
}, 180_000);

afterAll(async () => {
  for (const p of processes) await p.stop('SIGKILL');
  await silent?.close();
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('a controller process that dies inspecting a pod', () => {
  it('is not killed by it again: the next process releases the pod uninspected and says why', async () => {
    // The inspection deadline far away, so only the kill ends the first inspection.
    const args = ['--inspection-deadline-ms', '600000'];
    const first = operator(args);
    // Created once the operator has installed the CRDs (--install-crds) and the API server serves them.
    await eventually(() => createClusterPodPlacementConfig(client, { fallbackArchitecture: 'amd64' }), {
      timeoutMs: 90_000,
      what: `the ClusterPodPlacementConfig created (log: ${first.logFile})`,
    });
    const poison = await eventually(
      async () => {
        const p = await createPod(`${silent.host}/poison:1`);
        expect(gated(p)).toBe(true);
        return p;
      },
      { timeoutMs: 90_000, what: `a pod gated by the first process (log: ${first.logFile})` },
    );
    const name = poison.metadata?.name ?? '';
    await eventually(
      async () => {
        const record = await client.request<{ data?: Record<string, string> }>({
          method: 'GET',
          path: `/api/v1/namespaces/${opNs}/configmaps/${INFLIGHT_RECORD_NAME}`,
        });
        expect(record.data?.['pods']).toContain(`${tenant}/${name} ${poison.metadata?.uid ?? ''}`);
        expect(silent.connections()).toBeGreaterThan(0);
      },
      { timeoutMs: 60_000, what: `the poison pod on the in-flight record (log: ${first.logFile})` },
    );
    await first.stop('SIGKILL');
    const connectionsBefore = silent.connections();

    const second = operator(args);
    const released = await eventually(
      async () => {
        const p = await client.request<Pod>({ method: 'GET', path: podPath(name) });
        expect(gated(p)).toBe(false);
        return p;
      },
      { timeoutMs: 90_000, what: `the poison pod released by the second process (log: ${second.logFile})` },
    );
    expect(released.metadata?.annotations?.[ANNOTATIONS.imageInspectError]).toBe(
      RELEASED_UNINSPECTED_MESSAGE,
    );
    expect(
      released.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
        ?.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: ARCH_LABEL, operator: 'In', values: ['amd64'] }] }]);
    await eventually(
      async () => {
        const events = await client.request<{ items: CoreEvent[] }>({
          method: 'GET',
          path: `/api/v1/namespaces/${tenant}/events`,
        });
        const warnings = events.items.filter(
          (e) => e.involvedObject?.name === name && e.reason === EVENT_REASONS.inspectionError,
        );
        expect(warnings.map((e) => e.message).join('\n')).toContain(RELEASED_UNINSPECTED_MESSAGE);
      },
      { what: 'the Warning event saying why the pod was released uninspected' },
    );
    // Not inspected again: the second process never connected to that registry.
    expect(silent.connections()).toBe(connectionsBefore);
    await second.stop('SIGKILL');
  }, 300_000);
});

describe("the webhook, while the controller's Lease is not renewed", () => {
  it('admits new pods ungated past the threshold, says so, and gates again while the Lease is renewed', async () => {
    // The controller is gone (killed above); its Lease was last renewed by a process that no longer runs.
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${opNs}/leases/${LEADER_ELECTION_ID}`;
    await client.request({
      method: 'POST',
      path: `/apis/coordination.k8s.io/v1/namespaces/${opNs}/leases`,
      body: {
        metadata: { name: LEADER_ELECTION_ID },
        spec: {
          holderIdentity: 'crashed-controller',
          leaseDurationSeconds: 15,
          renewTime: microTime(Date.now()),
          acquireTime: microTime(Date.now()),
        },
      },
    });
    const webhook = operator(['--controller-lease-stale-after-ms', '3000'], 'webhook');
    const image = `${silent.host}/app:1`;
    await eventually(async () => expect(gated(await createPod(image))).toBe(false), {
      timeoutMs: 90_000,
      what: `a pod admitted ungated once the Lease is stale (log: ${webhook.logFile})`,
    });
    await eventually(
      async () => {
        const events = await client.request<{ items: CoreEvent[] }>({
          method: 'GET',
          path: `/api/v1/namespaces/${opNs}/events`,
        });
        const suspended = events.items.filter(
          (e) =>
            e.reason === GATING_EVENT_REASONS.suspended &&
            e.involvedObject?.kind === 'Lease' &&
            e.involvedObject.name === LEADER_ELECTION_ID,
        );
        expect(suspended.map((e) => e.message).join('\n')).toContain('held by crashed-controller');
      },
      { what: 'the Warning event on the Lease' },
    );
    // A controller renewing its Lease again (here by hand, at every attempt, as a live one does every few seconds).
    await eventually(
      async () => {
        const lease = await client.request<{ spec: Record<string, unknown> }>({
          method: 'GET',
          path: leasePath,
        });
        await client.request({
          method: 'PUT',
          path: leasePath,
          body: { ...lease, spec: { ...lease.spec, renewTime: microTime(Date.now()) } },
        });
        expect(gated(await createPod(image))).toBe(true);
      },
      {
        timeoutMs: 60_000,
        intervalMs: 250,
        what: `a pod gated again after renewal (log: ${webhook.logFile})`,
      },
    );
    expect(webhook.log()).toContain('is renewed again: new pods are gated again');
  }, 300_000);
});
