// The pod placement operator behind an egress proxy, end to end: a private cluster whose real kube-apiserver calls
// the operator's webhook, a real distribution registry reachable only through a real forward proxy on loopback (the
// `proxy` npm package; the registry's name, `registry.proxy-test`, is resolved by the proxy alone), configured as
// OLM configures it (HTTPS_PROXY / NO_PROXY, here passed as the parsed option the operator command builds):
//  - pods are placed from inspections through the tunnel;
//  - a tunnel the proxy refuses releases the pod at once with an annotation and event naming the proxy, not the
//    registry, and the operator goes on placing other pods.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage } from '../../../src/devcluster/registry-images.js';
import { ANNOTATIONS, EVENT_REASONS } from '../../../src/podplacement/constants.js';
import { GIVE_UP_MESSAGES } from '../../../src/podplacement/placement-plan.js';
import { proxyConfigFromEnvironment } from '../../../src/registry/proxy-config.js';
import { eventually, uniqueName } from '../../support/cluster.js';
import { startForwardProxy, type ForwardProxy } from '../../support/forward-proxy.js';
import {
  requiredArchs,
  startInProcessOperatorCluster,
  type InProcessOperatorCluster,
} from '../podplacement/in-process-operator.js';
import type { TestPod } from '../podplacement/support.js';

const OP_NS = 'pp-proxy-operator';
const registryName = 'registry.proxy-test';
const refusedName = 'refused.proxy-test';

let env: InProcessOperatorCluster | undefined;
let registry: LocalRegistry | undefined;
let proxy: ForwardProxy | undefined;
let registryPort = '';
const root = mkdtempSync(path.join(os.tmpdir(), 'pp-proxy-'));

const req = <T>(method: 'GET' | 'POST', p: string, body?: unknown): Promise<T> => {
  if (!env) throw new Error('the cluster did not start');
  return env.request<T>(method, p, body);
};

async function createNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await req('POST', '/api/v1/namespaces', { metadata: { name } });
  await eventually(() => req('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`), {
    what: `default SA in ${name}`,
  });
  return name;
}

const createPod = (namespace: string, name: string, image: string) =>
  req('POST', `/api/v1/namespaces/${namespace}/pods`, {
    metadata: { name },
    spec: { containers: [{ name: 'c', image }] },
  });

const getPod = (namespace: string, name: string): Promise<TestPod> =>
  req<TestPod>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);

const ungated = (namespace: string, name: string): Promise<TestPod> =>
  eventually(
    async () => {
      const pod = await getPod(namespace, name);
      if ((pod.spec.schedulingGates ?? []).length > 0) throw new Error(`${namespace}/${name} still gated`);
      return pod;
    },
    { timeoutMs: 60_000, what: `pod ${namespace}/${name} ungated` },
  );

beforeAll(async () => {
  registry = await startLocalRegistry({
    stateDir: path.join(root, 'registry'),
    auth: 'none',
    extraDnsNames: [registryName],
  });
  registryPort = registry.host.split(':')[1] ?? '';
  await registry.pushImage(
    'team/app',
    '1',
    multiPlatformImage({ platforms: [{ architecture: 'arm64' }, { architecture: 'ppc64le' }] }),
  );
  proxy = await startForwardProxy({
    hosts: { [registryName]: '127.0.0.1' },
    refuse: (target) => target.startsWith(`${refusedName}:`),
  });
  const registryCa = registry.caCertPem;
  const proxyUrl = proxy.url;
  env = await startInProcessOperatorCluster({
    name: 'pp-proxy',
    root,
    operatorNamespace: OP_NS,
    cluster: { nodes: 'none', scheduler: false, kwok: false },
    operator: {
      registry: {
        caCertificates: [registryCa],
        // What the operator command reads from OLM's environment for a cluster proxy.
        proxy: proxyConfigFromEnvironment({
          HTTPS_PROXY: proxyUrl,
          NO_PROXY: '.cluster.local,.svc,172.30.0.0/16',
        }),
      },
      workers: 4,
      inspectionDeadlineMs: 15_000,
    },
    clusterConfigSpec: { fallbackArchitecture: 'amd64' },
  });
  await eventually(
    () =>
      req(
        'GET',
        '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
      ),
    { timeoutMs: 60_000, what: 'the gating webhook configuration' },
  );
}, 240_000);

afterAll(async () => {
  await env?.stop();
  await Promise.all([registry?.stop(), proxy?.close()]);
  rmSync(root, { recursive: true, force: true });
}, 120_000);

describe('pod placement behind an egress proxy', () => {
  it('places pods from inspections through the CONNECT tunnel', async () => {
    const ns = await createNamespace('proxied');
    const before = proxy?.connects().length ?? 0;
    await createPod(ns, 'web', `${registryName}:${registryPort}/team/app:1`);
    const pod = await ungated(ns, 'web');
    expect(requiredArchs(pod)).toEqual(['arm64', 'ppc64le']);
    const tunnels = proxy?.connects().slice(before) ?? [];
    expect(tunnels.map((t) => t.target)).toContain(`${registryName}:${registryPort}`);
    expect(tunnels.every((t) => t.headers.authorization === undefined)).toBe(true);
  });

  it('releases a pod whose tunnel the proxy refuses, naming the proxy, and keeps placing others', async () => {
    const ns = await createNamespace('refused');
    await createPod(ns, 'blocked', `${refusedName}:${registryPort}/team/app:1`);
    const pod = await ungated(ns, 'blocked');
    expect(requiredArchs(pod)).toEqual(['amd64']); // the fallback architecture
    const annotation = pod.metadata.annotations?.[ANNOTATIONS.imageInspectError] ?? '';
    expect(annotation).toMatch(/^permanent error, not retried: /);
    expect(annotation).toContain(
      `no tunnel to ${refusedName}:${registryPort} through the proxy ${proxy?.url}`,
    );
    expect(annotation).toContain('403 Forbidden');
    await eventually(
      async () => {
        const events = await req<{ items: { reason: string; message: string }[] }>(
          'GET',
          `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name%3Dblocked`,
        );
        const found = events.items.find(
          (e) =>
            e.reason === EVENT_REASONS.inspectionError && e.message.startsWith(GIVE_UP_MESSAGES.permanent),
        );
        if (found === undefined) throw new Error('no permanent-failure event yet');
        expect(found.message).toContain(`the proxy ${proxy?.url} (HTTPS_PROXY)`);
      },
      { what: 'the permanent-failure event naming the proxy' },
    );
    await createPod(ns, 'after', `${registryName}:${registryPort}/team/app:1`);
    expect(requiredArchs(await ungated(ns, 'after'))).toEqual(['arm64', 'ppc64le']);
  });
});
