// ClusterPodPlacementConfig served as v1alpha1 and stored as v1beta1, converted by the operator's webhook on the real
// kube-apiserver: v1beta1-only fields (plugins, fallbackArchitecture) survive a v1alpha1 update, and v1alpha1 reads
// carry them in an annotation. The operator's validating webhook answers too: what it accepts but does not
// implement (the exec format error monitor) comes back to kubectl as a warning and shows as a status condition.
// Runs on a private, node-less cluster: the config is a cluster singleton, and the operator re-points the CRD's
// conversion webhook and its validating webhook at its own URL.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryPaths } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { CONVERSION_WEBHOOK_PATH, SPEC_ANNOTATION } from '../../../src/podplacement/api/conversion.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import { ApiStatusError, KubeClient } from '../../../src/runtime/index.js';
import { eventually, startApiServerOnlyTestCluster, uniqueName } from '../../support/cluster.js';
import { inProcessOperatorOptions } from './in-process-operator.js';

const run = promisify(execFile);
const opNs = 'pp-conversion-operator';
const crdPath =
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clusterpodplacementconfigs.multiarch.openshift.io';
const betaPath = '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs';
const alphaPath = '/apis/multiarch.openshift.io/v1alpha1/clusterpodplacementconfigs';

interface Cppc {
  apiVersion: string;
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}

let cluster: DevCluster | undefined;
let client: KubeClient;
const stop = new AbortController();
let operator: PodPlacementOperatorHandle | undefined;

const plugins = {
  nodeAffinityScoring: {
    enabled: true,
    platforms: [
      { architecture: 'arm64', weight: 60 },
      { architecture: 'amd64', weight: 20 },
    ],
  },
};

beforeAll(async () => {
  cluster = await startApiServerOnlyTestCluster(uniqueName('pp-conversion'));
  client = new KubeClient(await cluster.kubeConfig());
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: opNs } } });
  operator = await startPodPlacementOperator({
    ...inProcessOperatorOptions({
      kubeConfig: await cluster.kubeConfig(),
      namespace: opNs,
      signal: stop.signal,
      certDir: mkdtempSync(path.join(os.tmpdir(), 'pp-conversion-')),
    }),
    manageValidatingWebhook: true,
  });
  await Promise.race([operator.validatingWebhookConfigured, operator.stopped]);
  const port = operator.webhookPort;
  await eventually(
    async () => {
      const crd = await client.request<{
        spec: {
          conversion: { strategy: string; webhook?: { clientConfig: { url?: string; caBundle?: string } } };
        };
      }>({ method: 'GET', path: crdPath });
      const cc = crd.spec.conversion.webhook?.clientConfig;
      if (cc?.url !== `https://127.0.0.1:${port}${CONVERSION_WEBHOOK_PATH}` || !cc.caBundle)
        throw new Error(`conversion webhook not configured yet: ${JSON.stringify(crd.spec.conversion)}`);
    },
    { timeoutMs: 60_000, what: 'the CRD conversion webhook pointing at the operator' },
  );
}, 180_000);

afterAll(async () => {
  stop.abort();
  await operator?.stopped.catch(() => undefined);
  await client?.close();
  await cluster?.stop({ wipe: true });
}, 120_000);

const get = (base: string) => client.request<Cppc>({ method: 'GET', path: `${base}/cluster` });

/** `kubectl patch` of the config through v1beta1, as an admin types it; returns what kubectl printed on stderr. */
async function kubectlPatch(spec: Record<string, unknown>): Promise<string> {
  const { stderr } = await run(binaryPaths().kubectl, [
    '--kubeconfig',
    cluster?.kubeconfigPath ?? '',
    'patch',
    'clusterpodplacementconfigs.v1beta1.multiarch.openshift.io',
    'cluster',
    '--type=merge',
    '-p',
    JSON.stringify({ spec }),
  ]);
  return stderr;
}

/** The config's ExecFormatErrorMonitorUnsupported condition once the controller reports it with `reason`. */
function monitorCondition(reason: string) {
  return eventually(
    async () => {
      const c = (await get(betaPath)).status?.conditions?.find(
        (x) => x.type === 'ExecFormatErrorMonitorUnsupported',
      );
      if (c?.reason !== reason) throw new Error(`condition is ${JSON.stringify(c)}`);
      return c;
    },
    { timeoutMs: 60_000, what: `ExecFormatErrorMonitorUnsupported with reason ${reason}` },
  );
}

describe('ClusterPodPlacementConfig conversion webhook', () => {
  it('keeps v1beta1-only fields through v1alpha1 reads and updates', async () => {
    await client.request({
      method: 'POST',
      path: betaPath,
      body: {
        apiVersion: 'multiarch.openshift.io/v1beta1',
        kind: 'ClusterPodPlacementConfig',
        metadata: { name: 'cluster' },
        spec: { logVerbosity: 'Normal', plugins, fallbackArchitecture: 's390x' },
      },
    });

    // v1beta1 read: as written.
    const beta = await get(betaPath);
    expect(beta.spec).toMatchObject({ logVerbosity: 'Normal', plugins, fallbackArchitecture: 's390x' });
    expect(beta.metadata.annotations?.[SPEC_ANNOTATION]).toBeUndefined();

    // v1alpha1 read: only v1alpha1 fields in spec, the rest carried in the annotation.
    const alpha = await get(alphaPath);
    expect(alpha.apiVersion).toBe('multiarch.openshift.io/v1alpha1');
    expect(alpha.spec).toEqual({ logVerbosity: 'Normal' });
    expect(JSON.parse(alpha.metadata.annotations?.[SPEC_ANNOTATION] ?? '{}')).toEqual({
      plugins,
      fallbackArchitecture: 's390x',
    });

    // Full update (PUT) through v1alpha1, as an old client does: change a v1alpha1 field, send back what it read.
    // The operator writes the object too (finalizer, status), so re-read and retry on a conflict like a client would.
    let updated: Cppc | undefined;
    for (let attempt = 0; updated === undefined; attempt++) {
      const current = attempt === 0 ? alpha : await get(alphaPath);
      try {
        updated = await client.request<Cppc>({
          method: 'PUT',
          path: `${alphaPath}/cluster`,
          body: { ...current, spec: { ...current.spec, logVerbosity: 'Debug' } },
        });
      } catch (err) {
        if (!(err instanceof ApiStatusError && err.statusCode === 409) || attempt >= 10) throw err;
      }
    }
    expect(updated.spec).toEqual({ logVerbosity: 'Debug' });

    const after = await get(betaPath);
    expect(after.spec).toMatchObject({ logVerbosity: 'Debug', plugins, fallbackArchitecture: 's390x' });
    // The annotation is a v1alpha1 artefact: it is not stored.
    expect(after.metadata.annotations?.[SPEC_ANNOTATION]).toBeUndefined();

    // Merge patch through v1alpha1 (what kubectl edit/patch does): the carried fields survive too.
    await client.request({
      method: 'PATCH',
      path: `${alphaPath}/cluster`,
      body: { spec: { logVerbosity: 'Trace' } },
      contentType: 'application/merge-patch+json',
    });
    expect((await get(betaPath)).spec).toMatchObject({
      logVerbosity: 'Trace',
      plugins,
      fallbackArchitecture: 's390x',
    });
  });

  it('shows the same status conditions in both versions', async () => {
    // The operator's controller writes conditions on its own schedule: compare two reads of one resourceVersion.
    const { alpha, beta } = await eventually(
      async () => {
        const b = await get(betaPath);
        const a = await get(alphaPath);
        if (!b.status?.conditions?.length) throw new Error('no conditions yet');
        if (a.metadata.resourceVersion !== b.metadata.resourceVersion)
          throw new Error('changed between reads');
        return { alpha: a, beta: b };
      },
      { timeoutMs: 60_000, what: 'status conditions on the cluster config' },
    );
    expect(alpha.status).toEqual(beta.status);
  });

  it('applies the singleton rule to v1alpha1 creates', async () => {
    const err = await client
      .request({
        method: 'POST',
        path: `${alphaPath}?dryRun=All`,
        body: {
          apiVersion: 'multiarch.openshift.io/v1alpha1',
          kind: 'ClusterPodPlacementConfig',
          metadata: { name: 'other' },
          spec: {},
        },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ApiStatusError);
    expect((err as ApiStatusError).message).toContain("its name must be 'cluster'");
  });

  it('warns kubectl of what the exec format error monitor does not cover, and reports what it does in a condition', async () => {
    // The API server picks up the webhook configuration moments after the operator writes it: the patch is
    // repeated (it is idempotent) until the warning comes back.
    const stderr = await eventually(
      async () => {
        const printed = await kubectlPatch({ plugins: { execFormatErrorMonitor: { enabled: true } } });
        if (!printed.includes('Warning:')) throw new Error(`no warning yet: ${JSON.stringify(printed)}`);
        return printed;
      },
      { timeoutMs: 30_000, what: 'the admission warning printed by kubectl' },
    );
    expect(stderr).toContain(
      'Warning: spec.plugins.execFormatErrorMonitor.enabled: Tessera detects the exec format errors the kubelet ' +
        'reports, without an eBPF DaemonSet; a failed exec in a container that keeps running is not seen, and no ' +
        'ENoExecEvents are made.',
    );
    // Admitted all the same, the rest of the spec untouched.
    expect((await get(betaPath)).spec).toMatchObject({
      plugins: { ...plugins, execFormatErrorMonitor: { enabled: true } },
    });
    // It stays False (nothing is unsupported as asked), and says what is covered and what is not.
    const covered = await monitorCondition('ExecFormatErrorMonitorFromKubeletReports');
    expect(covered.status).toBe('False');
    expect(covered.message).toContain('Tessera detects, without an eBPF DaemonSet');
    expect(covered.message).toContain('Not covered');

    // Turned off: no warning, and the condition says so.
    expect(await kubectlPatch({ plugins: { execFormatErrorMonitor: { enabled: false } } })).not.toContain(
      'Warning:',
    );
    expect((await monitorCondition('ExecFormatErrorMonitorNotEnabled')).status).toBe('False');
  });
});
