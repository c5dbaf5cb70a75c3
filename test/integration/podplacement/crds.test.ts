// The generated CRDs on the real kube-apiserver: good ClusterPodPlacementConfig / PodPlacementConfig objects are
// accepted with their defaults, bad ones are refused with a message that says what is wrong. ClusterPodPlacementConfig
// is a cluster singleton shared with other test files, so its checks use server-side dry run (nothing persisted).
import { beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/runtime/client.js';
import { ApiStatusError } from '../../../src/runtime/errors.js';
import { ResourceClient } from '../../../src/runtime/resource-client.js';
import type { KubeObject } from '../../../src/runtime/object.js';
import { installPodPlacementCrds } from '../../../src/podplacement/api/install.js';
import { ClusterPodPlacementConfigs, PodPlacementConfigs } from '../../../src/podplacement/resources.js';
import { eventually, testKubeConfig, useTestNamespace } from '../../support/cluster.js';

type Obj = KubeObject & { spec?: Record<string, unknown> };

const ns = useTestNamespace('pp-crd');
let client: KubeClient;
let cppc: ResourceClient<Obj>;
let ppc: ResourceClient<Obj>;

beforeAll(async () => {
  client = new KubeClient(testKubeConfig());
  // The e2e operator on this cluster may patch the conversion webhook between this install's read of the live CRD
  // and its apply (then refused: url and service both set); the next attempt reads the patched one.
  await eventually(() => installPodPlacementCrds(client), { what: 'pod placement CRDs installed' });
  cppc = new ResourceClient<Obj>(client, ClusterPodPlacementConfigs);
  ppc = new ResourceClient<Obj>(client, PodPlacementConfigs);
  // Established can precede discovery by a moment.
  await eventually(() => cppc.list({ limit: 1 }), { what: 'clusterpodplacementconfigs served' });
  await eventually(() => ppc.list({ namespace: ns.name, limit: 1 }), { what: 'podplacementconfigs served' });
});

function cluster(spec: Record<string, unknown>, name = 'cluster'): Obj {
  return { metadata: { name }, spec };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiStatusError);
    const e = err as ApiStatusError;
    expect(e.statusCode).toBe(422);
    return e.message;
  }
  throw new Error('the API server accepted an object it should refuse');
}

const scoring = (platforms: unknown[]) => ({ nodeAffinityScoring: { enabled: true, platforms } });

describe('ClusterPodPlacementConfig CRD', () => {
  // Server-side apply (dry run) validates the same way whether or not another test file owns `cluster` now.
  const applyOpts = { dryRun: true, fieldManager: 'crd-test', force: true };

  it('accepts the recommended config and fills in the defaults', async () => {
    const created = await cppc.apply(
      cluster({
        namespaceSelector: {
          matchExpressions: [
            { key: 'multiarch.openshift.io/exclude-pod-placement', operator: 'DoesNotExist' },
          ],
        },
        plugins: scoring([
          { architecture: 'arm64', weight: 50 },
          { architecture: 'amd64', weight: 1 },
        ]),
      }),
      applyOpts,
    );
    expect(created.spec?.['logVerbosity']).toBe('Normal');
    expect(created.spec?.['fallbackArchitecture']).toBe('');
    expect(created.apiVersion).toBe('multiarch.openshift.io/v1beta1');
  });

  // v1alpha1 needs the operator's conversion webhook: see conversion.test.ts (private cluster).

  it('refuses any name but cluster', async () => {
    expect(await refusal(cppc.create(cluster({}, 'not-cluster'), { dryRun: true }))).toContain(
      "ClusterPodPlacementConfig is a singleton: its name must be 'cluster'",
    );
  });

  it('refuses a duplicate architecture, naming it', async () => {
    const msg = await refusal(
      cppc.create(
        cluster({
          plugins: scoring([
            { architecture: 'arm64', weight: 50 },
            { architecture: 'amd64', weight: 1 },
            { architecture: 'arm64', weight: 10 },
          ]),
        }),
        { dryRun: true },
      ),
    );
    expect(msg).toContain('duplicate architecture arm64 in nodeAffinityScoring.platforms');
  });

  it.each([
    ['weight 0', { plugins: scoring([{ architecture: 'arm64', weight: 0 }]) }, 'weight'],
    ['weight 101', { plugins: scoring([{ architecture: 'arm64', weight: 101 }]) }, 'weight'],
    ['unknown architecture', { plugins: scoring([{ architecture: 'riscv64', weight: 1 }]) }, 'architecture'],
    ['empty platforms', { plugins: scoring([]) }, 'platforms'],
    [
      'scoring without enabled',
      { plugins: { nodeAffinityScoring: { platforms: [{ architecture: 'arm64', weight: 1 }] } } },
      'enabled',
    ],
    ['bad log verbosity', { logVerbosity: 'Loud' }, 'logVerbosity'],
    ['bad fallback architecture', { fallbackArchitecture: 'mips' }, 'fallbackArchitecture'],
  ])('refuses %s', async (_name, spec, field) => {
    expect(await refusal(cppc.create(cluster(spec), { dryRun: true }))).toContain(field);
  });
});

describe('PodPlacementConfig CRD', () => {
  const ppcObj = (name: string, spec: Record<string, unknown>): Obj => ({
    metadata: { name, namespace: ns.name },
    spec,
  });

  it('accepts a config and defaults priority to 0', async () => {
    const created = await ppc.create(
      ppcObj('low', {
        labelSelector: { matchLabels: { app: 'web' } },
        plugins: scoring([{ architecture: 'ppc64le', weight: 20 }]),
      }),
      { dryRun: true },
    );
    expect(created.spec?.['priority']).toBe(0);
  });

  it.each([
    ['priority 256', { priority: 256, plugins: scoring([{ architecture: 'arm64', weight: 1 }]) }, 'priority'],
    ['priority -1', { priority: -1, plugins: scoring([{ architecture: 'arm64', weight: 1 }]) }, 'priority'],
    ['no plugins', { priority: 1 }, 'plugins'],
    [
      'duplicate architecture',
      {
        plugins: scoring([
          { architecture: 's390x', weight: 1 },
          { architecture: 's390x', weight: 2 },
        ]),
      },
      'duplicate architecture s390x',
    ],
  ])('refuses %s', async (_name, spec, text) => {
    expect(await refusal(ppc.create(ppcObj('bad', spec), { dryRun: true }))).toContain(text);
  });
});
