// Issue #26 items 2 and 4 on a real API server: the nodes' image policy (image.config.openshift.io/cluster
// allowedRegistries / blockedRegistries) keeps the operator from inspecting an image the nodes would refuse to pull
// (the pod is released at once with a Warning event and the error annotation naming the rule, the registry gets no
// request, and `podplacement explain` says the same); and an operator bundle published as an index of several
// platforms counts as every architecture for OLM's bundle-unpack pods, as MTO answers (MTO's reconciler case
// "OCI Index bundles + OCI index image"), while an ordinary pod's multi-architecture image still costs one manifest
// request. On a private cluster (the image config and the ClusterPodPlacementConfig are cluster singletons) with a
// scheduler, a controller manager and a node of each architecture, two local registries, and the operator in this
// process.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import {
  blobOf,
  multiPlatformImage,
  singleImage,
  type BuiltImage,
} from '../../../src/devcluster/registry-images.js';
import { ANNOTATIONS, EVENT_REASONS, LABELS } from '../../../src/podplacement/constants.js';
import { BUNDLE_UNPACK_REF_LABEL } from '../../../src/podplacement/olm-bundle-unpack.js';
import { GIVE_UP_MESSAGES } from '../../../src/podplacement/placement-plan.js';
import { eventually } from '../../support/cluster.js';
import {
  podsIn,
  requiredArchs,
  startInProcessOperatorCluster,
  type InProcessOperatorCluster,
} from './in-process-operator.js';
import { runTessera } from './support.js';

const opNs = 'pp-image-policy-operator';
const appNs = 'pp-image-policy-apps';
const imageConfigPath = '/apis/config.openshift.io/v1/images/cluster';
const ociIndexType = 'application/vnd.oci.image.index.v1+json';
const bundleLabels = { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1' };

let env: InProcessOperatorCluster | undefined;
/** In allowedRegistries. */
let allowed: LocalRegistry | undefined;
/** Not in allowedRegistries: the nodes would refuse its images. */
let other: LocalRegistry | undefined;
const root = mkdtempSync(path.join(os.tmpdir(), 'pp-image-policy-'));

async function req<T>(method: 'GET' | 'POST' | 'PUT', p: string, body?: unknown): Promise<T> {
  if (!env) throw new Error('the cluster did not start');
  return env.request<T>(method, p, body);
}
const pods = () => {
  if (!env) throw new Error('the cluster did not start');
  return podsIn(env.client, appNs);
};

const imageConfig = (registrySources: Record<string, string[]>, resourceVersion?: string) => ({
  apiVersion: 'config.openshift.io/v1',
  kind: 'Image',
  metadata: { name: 'cluster', ...(resourceVersion ? { resourceVersion } : {}) },
  spec: { registrySources },
});

/** An OCI index over single images that each carry the OLM bundle labels: a bundle built by a multi-arch pipeline. */
function bundleIndex(architectures: readonly string[]): BuiltImage {
  const children = architectures.map((architecture) =>
    singleImage({ platform: { architecture }, labels: bundleLabels, salt: `bundle-${architecture}` }),
  );
  const manifests = children.map((child, i) => ({
    mediaType: child.manifest.mediaType,
    digest: child.manifest.digest,
    size: child.manifest.size,
    platform: { os: 'linux', architecture: architectures[i] },
  }));
  const manifest = blobOf(
    ociIndexType,
    Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: ociIndexType, manifests })),
  );
  return { manifest, blobs: [], children };
}

/** Registry reads (manifests and blobs) of `repository`. */
const reads = (registry: LocalRegistry | undefined, repository: string) =>
  (registry?.accessLog() ?? []).filter((e) => e.method === 'GET' && e.path.startsWith(`/v2/${repository}/`));
const manifestReads = (registry: LocalRegistry | undefined, repository: string) =>
  reads(registry, repository).filter((e) => e.path.startsWith(`/v2/${repository}/manifests/`));

async function warnings(name: string): Promise<string[]> {
  const list = await req<{ items: { type?: string; reason?: string; message?: string }[] }>(
    'GET',
    `/api/v1/namespaces/${appNs}/events?fieldSelector=involvedObject.name%3D${name}`,
  );
  return list.items
    .filter((e) => e.type === 'Warning' && e.reason === EVENT_REASONS.inspectionError)
    .map((e) => e.message ?? '');
}

beforeAll(async () => {
  allowed = await startLocalRegistry({ stateDir: path.join(root, 'allowed'), auth: 'none' });
  other = await startLocalRegistry({ stateDir: path.join(root, 'other'), auth: 'none' });
  const platforms = (archs: string[], salt: string) =>
    multiPlatformImage({ platforms: archs.map((a) => ({ architecture: a })), salt });
  await allowed.pushImage('olm/bundle', 'v1', bundleIndex(['ppc64le', 'arm64']));
  await allowed.pushImage('olm/opm', 'v1', platforms(['ppc64le', 's390x'], 'opm'));
  await allowed.pushImage('team/app', '1', platforms(['amd64', 'arm64'], 'app'));
  await other.pushImage('team/app', '1', platforms(['amd64', 'arm64'], 'other'));

  env = await startInProcessOperatorCluster({
    name: 'pp-policy',
    root,
    operatorNamespace: opNs,
    namespaces: [appNs],
    imageConfigSpec: imageConfig({ allowedRegistries: [allowed.host] }).spec,
    operator: { registry: { caCertificates: [allowed.caCertPem, other.caCertPem] } },
  });
}, 240_000);

afterAll(async () => {
  await env?.stop();
  await Promise.all([allowed?.stop(), other?.stop()]);
  rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('the nodes’ image policy', () => {
  it('releases a pod whose registry is not in allowedRegistries uninspected, names the rule, and explain says so', async () => {
    const image = `${other?.host ?? ''}/team/app:1`;
    const name = await pods().createGated('not-allowed', { containers: [{ name: 'c', image }] });
    const pod = await pods().ungated(name);
    const rule = `registry ${other?.host ?? ''} is not in image.config.openshift.io/cluster allowedRegistries: the nodes would refuse to pull image ${image}, so it was not inspected`;
    expect(pod.metadata.labels?.[LABELS.imageInspectError]).toBe('');
    expect(pod.metadata.labels?.[LABELS.imageInspectErrorCount]).toBe('1');
    expect(pod.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toContain(rule);
    expect(requiredArchs(pod)).toEqual([]);
    await eventually(
      async () => {
        const messages = await warnings(name);
        expect(messages.some((m) => m.startsWith(GIVE_UP_MESSAGES.refused) && m.includes(rule))).toBe(true);
      },
      { what: 'the Warning event naming the rule' },
    );

    const run = await runTessera(
      env?.cluster.kubeconfigPath ?? '',
      'podplacement',
      'explain',
      `${appNs}/${name}`,
      '--registry-ca',
      allowed?.caFile ?? '',
      other?.caFile ?? '',
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${image}: REFUSED BY POLICY ${rule}`);
    expect(run.stdout).toContain("the cluster's image policy would keep the nodes from pulling");
    // Neither the operator nor explain asked the registry anything.
    expect(reads(other, 'team/app')).toEqual([]);
  }, 180_000);

  it('places the same image from an allowed registry as usual', async () => {
    const name = await pods().createGated('allowed', {
      containers: [{ name: 'c', image: `${allowed?.host ?? ''}/team/app:1` }],
    });
    expect(requiredArchs(await pods().ungated(name))).toEqual(['amd64', 'arm64']);
    // An ordinary multi-architecture image: one manifest request, no probe for a bundle.
    expect(manifestReads(allowed, 'team/app')).toHaveLength(1);
  }, 120_000);

  it('names blockedRegistries when the registry is blocked instead', async () => {
    const current = await req<{ metadata: { resourceVersion: string } }>('GET', imageConfigPath);
    await req(
      'PUT',
      imageConfigPath,
      imageConfig({ blockedRegistries: [other?.host ?? ''] }, current.metadata.resourceVersion),
    );
    const image = `${other?.host ?? ''}/team/app:1`;
    // The operator learns of the change through its watch: until then a pod may still be refused by the old rule.
    await eventually(
      async () => {
        const pod = await pods().ungated(
          await pods().createGated('blocked', { containers: [{ name: 'c', image }] }),
        );
        expect(pod.metadata.annotations?.[ANNOTATIONS.imageInspectError]).toContain(
          `registry ${other?.host ?? ''} is in image.config.openshift.io/cluster blockedRegistries: the nodes would refuse to pull image ${image}`,
        );
      },
      { timeoutMs: 60_000, what: 'a pod refused by blockedRegistries' },
    );
    expect(reads(other, 'team/app')).toEqual([]);
  }, 180_000);
});

describe('operator bundles published as indexes of several platforms (MTO: "OCI Index bundles + OCI index image")', () => {
  const bundle = (): string => `${allowed?.host ?? ''}/olm/bundle:v1`;
  const opm = (): string => `${allowed?.host ?? ''}/olm/opm:v1`;

  it('an ordinary pod gets the index’s platforms, for one manifest request', async () => {
    const name = await pods().createGated('plain-bundle', { containers: [{ name: 'c', image: bundle() }] });
    expect(requiredArchs(await pods().ungated(name))).toEqual(['arm64', 'ppc64le']);
    expect(manifestReads(allowed, 'olm/bundle')).toHaveLength(1);
  }, 120_000);

  it("OLM's unpack pod: the bundle counts as every architecture, so the other images decide, as MTO answers", async () => {
    const name = await pods().createGated(
      'unpack',
      {
        initContainers: [
          { name: 'util', image: opm() },
          { name: 'pull', image: bundle() },
        ],
        containers: [{ name: 'extract', image: opm() }],
      },
      { [BUNDLE_UNPACK_REF_LABEL]: 'abc123' },
    );
    const pod = await pods().ungated(name);
    expect(requiredArchs(pod)).toEqual(['ppc64le', 's390x']);
    // The bundle index: its manifest, then its first runnable manifest and that one's config.
    expect(manifestReads(allowed, 'olm/bundle')).toHaveLength(1 + 2);
    expect(reads(allowed, 'olm/bundle').filter((e) => e.path.includes('/blobs/'))).toHaveLength(1);
  }, 120_000);

  it('a bundle-unpack pod of the bundle alone may run on every architecture; the probe is remembered', async () => {
    const before = manifestReads(allowed, 'olm/bundle').length;
    const name = await pods().createGated(
      'unpack-alone',
      { containers: [{ name: 'c', image: bundle() }] },
      { [BUNDLE_UNPACK_REF_LABEL]: 'def456' },
    );
    expect(requiredArchs(await pods().ungated(name))).toEqual(['amd64', 'arm64', 'ppc64le', 's390x']);
    // Answered from the cache: no request at all.
    expect(manifestReads(allowed, 'olm/bundle')).toHaveLength(before);
  }, 120_000);
});
