// Restarting on a reused cluster: an operator killed with SIGKILL leaves its ValidatingWebhookConfiguration behind,
// naming a port nobody answers, and its failurePolicy Fail refuses every ClusterPodPlacementConfig change. A new
// operator on another port must rewrite it before anyone relies on it. Runs on a private, node-less cluster that
// serves none of the registry policy kinds (the plain Kubernetes path), since the config is a cluster singleton.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { VALIDATING_WEBHOOK } from '../../../src/podplacement/constants.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import { KubeClient, isNotFound } from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { freePort, startOperatorProcess, type OperatorProcess } from './support.js';
import { inProcessOperatorOptions } from './in-process-operator.js';

const opNs = 'pp-restart-operator';
const vwcPath = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${VALIDATING_WEBHOOK.configurationName}`;
const cppcPath = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';

let cluster: DevCluster | undefined;
let client: KubeClient;
let child: OperatorProcess | undefined;
const stop = new AbortController();
let inProcess: PodPlacementOperatorHandle | undefined;

async function webhookUrls(): Promise<string[]> {
  const vwc = await client.request<{ webhooks: { clientConfig: { url?: string } }[] }>({
    method: 'GET',
    path: vwcPath,
  });
  return vwc.webhooks.map((w) => w.clientConfig.url ?? '');
}

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-restart'));
  client = new KubeClient(await cluster.kubeConfig());
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: opNs } } });
}, 180_000);

afterAll(async () => {
  stop.abort();
  await inProcess?.stopped.catch(() => undefined);
  await child?.stop('SIGKILL');
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

describe('operator restarted with SIGKILL on a reused cluster', () => {
  it('rewrites the validating webhook configuration for its new port before the config is changed', async () => {
    const firstPort = await freePort();
    child = startOperatorProcess({
      kubeconfigPath: cluster?.kubeconfigPath ?? '',
      namespace: opNs,
      globalPullSecretNamespace: opNs,
      registryCaFiles: [],
      webhookPort: firstPort,
      extraArgs: ['--manage-validating-webhook'],
    });
    await eventually(
      async () => {
        if (!(await webhookUrls()).every((u) => u.startsWith(`https://127.0.0.1:${firstPort}/`)))
          throw new Error('not written yet');
      },
      { timeoutMs: 90_000, what: `the first operator's validating webhook (log: ${child.logFile})` },
    );
    await client.request({
      method: 'POST',
      path: cppcPath,
      body: {
        apiVersion: 'multiarch.openshift.io/v1beta1',
        kind: 'ClusterPodPlacementConfig',
        metadata: { name: 'cluster' },
        spec: { logVerbosity: 'Normal' },
      },
    });

    await child.stop('SIGKILL');
    // What the next run finds: a configuration naming a dead port, which refuses config changes.
    expect((await webhookUrls())[0]).toContain(`127.0.0.1:${firstPort}/`);
    const refused = await client
      .request({
        method: 'PATCH',
        path: `${cppcPath}/cluster`,
        body: { spec: { logVerbosity: 'Debug' } },
        contentType: 'application/merge-patch+json',
      })
      .then(
        () => 'accepted',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    expect(refused).toMatch(/connection refused|failed calling webhook/);

    // The next run, as the `tessera start` demo starts it: another port, in this process.
    inProcess = await startPodPlacementOperator({
      ...inProcessOperatorOptions({
        kubeConfig: await (cluster as DevCluster).kubeConfig(),
        namespace: opNs,
        signal: stop.signal,
        certDir: mkdtempSync(path.join(os.tmpdir(), 'pp-restart-')),
      }),
      manageValidatingWebhook: true,
    });
    expect(inProcess.webhookPort).not.toBe(firstPort);
    await Promise.race([inProcess.validatingWebhookConfigured, inProcess.stopped]);
    expect(await webhookUrls()).toEqual([
      `https://127.0.0.1:${inProcess.webhookPort}${VALIDATING_WEBHOOK.clusterConfigPath}`,
      `https://127.0.0.1:${inProcess.webhookPort}${VALIDATING_WEBHOOK.clusterConfigPath}`, // DELETE, fails open
      `https://127.0.0.1:${inProcess.webhookPort}${VALIDATING_WEBHOOK.podConfigPath}`,
    ]);
    // The update goes through the new webhook, once the API server's own webhook cache has the rewritten
    // configuration (it follows the write within moments; the old port refuses, and the policy is Fail).
    const updated = await eventually(
      () =>
        client.request<{ spec: { logVerbosity?: string } }>({
          method: 'PATCH',
          path: `${cppcPath}/cluster`,
          body: { spec: { logVerbosity: 'Debug' } },
          contentType: 'application/merge-patch+json',
        }),
      { timeoutMs: 10_000, what: 'the update admitted by the restarted webhook' },
    );
    expect(updated.spec.logVerbosity).toBe('Debug');
    // A clean stop of a URL-reached operator removes the configuration, so nothing is left to go stale.
    stop.abort();
    await inProcess.stopped;
    const gone = await client.request({ method: 'GET', path: vwcPath }).then(
      () => false,
      (err: unknown) => isNotFound(err),
    );
    expect(gone).toBe(true);
  });
});
