// Short names (`team/app:1`, no registry) on a cluster whose image.config.openshift.io/cluster names
// containerRuntimeSearchRegistries: the operator looks for them where CRI-O on the nodes would, the search registries
// in order, the first that has the image winning, one manifest request per candidate and none again for a cached
// answer; it follows a change of the list while it runs; `podplacement explain` says which candidate was chosen and
// why. On a private cluster (the image config and the ClusterPodPlacementConfig are cluster singletons) with a
// scheduler, a controller manager (it makes the kwok nodes schedulable) and a node of each architecture, two local
// registries, and the operator in this process.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import { ANNOTATIONS, ARCH_LABEL } from '../../../src/podplacement/constants.js';
import { eventually } from '../../support/cluster.js';
import {
  podsIn,
  requiredArchs,
  startInProcessOperatorCluster,
  type InProcessOperatorCluster,
} from './in-process-operator.js';
import { runTessera } from './support.js';

const opNs = 'pp-short-names-operator';
const appNs = 'pp-short-names-apps';
const imageConfigPath = '/apis/config.openshift.io/v1/images/cluster';

let env: InProcessOperatorCluster | undefined;
let first: LocalRegistry | undefined;
let second: LocalRegistry | undefined;
const root = mkdtempSync(path.join(os.tmpdir(), 'pp-short-names-'));
const nodeArch = new Map<string, string>();

const SHARED_IN_FIRST = ['amd64', 'arm64'];
const SHARED_IN_SECOND = ['ppc64le', 's390x'];
const ONLY_IN_SECOND = ['arm64', 's390x'];

async function req<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown): Promise<T> {
  if (!env) throw new Error('the cluster did not start');
  return env.request<T>(method, p, body);
}
const pods = () => {
  if (!env) throw new Error('the cluster did not start');
  return podsIn(env.client, appNs);
};
const createGatedPod = (prefix: string, image: string) =>
  pods().createGated(prefix, { containers: [{ name: 'c', image }] });

const imageConfig = (searchRegistries: string[]) => ({
  apiVersion: 'config.openshift.io/v1',
  kind: 'Image',
  metadata: { name: 'cluster' },
  spec: { registrySources: { containerRuntimeSearchRegistries: searchRegistries } },
});

const manifestGets = (registry: LocalRegistry | undefined, repository: string) =>
  (registry?.accessLog() ?? []).filter(
    (e) => e.method === 'GET' && e.path.startsWith(`/v2/${repository}/manifests/`),
  );

beforeAll(async () => {
  first = await startLocalRegistry({ stateDir: path.join(root, 'first'), auth: 'none' });
  second = await startLocalRegistry({ stateDir: path.join(root, 'second'), auth: 'none' });
  const platforms = (archs: string[]) =>
    multiPlatformImage({ platforms: archs.map((a) => ({ architecture: a })) });
  await first.pushImage('shared/app', '1', platforms(SHARED_IN_FIRST));
  await second.pushImage('shared/app', '1', platforms(SHARED_IN_SECOND));
  await second.pushImage('only-second/app', '1', platforms(ONLY_IN_SECOND));

  env = await startInProcessOperatorCluster({
    name: 'pp-short',
    root,
    operatorNamespace: opNs,
    namespaces: [appNs],
    imageConfigSpec: imageConfig([first.host, second.host]).spec,
    operator: { registry: { caCertificates: [first.caCertPem, second.caCertPem] } },
  });
  const nodes = await req<{ items: { metadata: { name: string; labels?: Record<string, string> } }[] }>(
    'GET',
    '/api/v1/nodes',
  );
  for (const n of nodes.items) nodeArch.set(n.metadata.name, n.metadata.labels?.[ARCH_LABEL] ?? '');
}, 240_000);

afterAll(async () => {
  await env?.stop();
  await Promise.all([first?.stop(), second?.stop()]);
  rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('short names with containerRuntimeSearchRegistries', () => {
  it('finds an image only the second search registry has, places the pod by its architectures, and explain says why', async () => {
    const image = 'only-second/app:1';
    const name = await createGatedPod('only-second', image);
    const pod = await pods().scheduled(name);
    expect(requiredArchs(pod)).toEqual(ONLY_IN_SECOND);
    expect(ONLY_IN_SECOND).toContain(nodeArch.get(pod.spec.nodeName ?? ''));
    // One manifest request per candidate, in order: the first registry lacks it, the second has it.
    expect(manifestGets(first, 'only-second/app').map((e) => e.status)).toEqual([404]);
    expect(manifestGets(second, 'only-second/app').map((e) => e.status)).toEqual([200]);

    // Another pod of the same image is answered from the cache: no request anywhere.
    const again = await pods().scheduled(await createGatedPod('only-second-again', image));
    expect(requiredArchs(again)).toEqual(ONLY_IN_SECOND);
    expect(manifestGets(first, 'only-second/app')).toHaveLength(1);
    expect(manifestGets(second, 'only-second/app')).toHaveLength(1);

    const run = await runTessera(
      env?.cluster.kubeconfigPath ?? '',
      'podplacement',
      'explain',
      `${appNs}/${name}`,
      '--registry-ca',
      first?.caFile ?? '',
      second?.caFile ?? '',
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${image}: ${ONLY_IN_SECOND.join(', ')}`);
    expect(run.stdout).toContain(
      `short name ${image}: the search registries are tried in order, as CRI-O does, and the first that has it is used: ${first?.host ?? ''}/${image} not there, ${second?.host ?? ''}/${image} chosen`,
    );
  }, 180_000);

  it('releases a pod whose short name no search registry has, saying where it looked', async () => {
    const name = await createGatedPod('missing', 'missing/app:1');
    const pod = await eventually(
      async () => {
        const p = await pods().get(name);
        if ((p.spec.schedulingGates ?? []).length > 0) throw new Error('still gated');
        return p;
      },
      { what: 'the pod released' },
    );
    expect(requiredArchs(pod)).toEqual([]);
    expect(pod.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toContain(
      `a short name that no search registry has (tried in order: ${first?.host ?? ''}/missing/app:1 not there, ${second?.host ?? ''}/missing/app:1 not there)`,
    );
  });

  it('takes the first registry that has it, and follows a reordering of the list while it runs', async () => {
    const before = await pods().scheduled(await createGatedPod('shared', 'shared/app:1'));
    expect(requiredArchs(before)).toEqual(SHARED_IN_FIRST);

    const current = await req<{ metadata: { resourceVersion: string } }>('GET', imageConfigPath);
    await req('PUT', imageConfigPath, {
      ...imageConfig([second?.host ?? '', first?.host ?? '']),
      metadata: { name: 'cluster', resourceVersion: current.metadata.resourceVersion },
    });
    // The operator learns of the change through its watch (and forgets its cached answers): until then a new pod
    // may still be placed by the old order.
    await eventually(
      async () => {
        const after = await pods().scheduled(await createGatedPod('shared-after', 'shared/app:1'));
        expect(requiredArchs(after)).toEqual(SHARED_IN_SECOND);
      },
      { timeoutMs: 60_000, what: 'a pod placed by the new order' },
    );
  }, 180_000);
});
