import { describe, expect, it } from 'vitest';
import {
  ApiStatusError,
  silentLogger,
  type KubeObject,
  type Logger,
  type ResourceType,
} from '../runtime/index.js';
import {
  admissionVerdict,
  formatReference,
  parseImageReference,
  pullSources,
  resolveShortName,
  type RegistryPolicy,
} from '../registry/index.js';
import {
  ImageConfigs,
  ImageContentSourcePolicies,
  ImageDigestMirrorSets,
  ImageTagMirrorSets,
  additionalTrustedCas,
  additionalTrustedCaHost,
  clusterRegistryPolicy,
  hostCaCertificatesOf,
  samePolicy,
  scopeNestedInside,
  servedKinds,
  type ImageConfig,
  type SignaturePolicy,
  type ImageDigestMirrorSet,
  type RegistryPolicyObjects,
} from './registry-policy.js';
import {
  RegistryPolicyWatch,
  TRUSTED_CA_MIN_READ_INTERVAL_MS,
  TRUSTED_CA_POLL_INTERVAL_MS,
  TrustedCaWatch,
  discoverPolicyKinds,
  fetchAdditionalTrustedCa,
  readAdditionalTrustedCas,
  readRegistryTrust,
  type PolicyInformer,
} from './registry-policy-watch.js';
import { FakeClock } from '../runtime/testing/index.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const none: RegistryPolicyObjects = {
  imageDigestMirrorSets: [],
  imageTagMirrorSets: [],
  imageContentSourcePolicies: [],
  imageConfigs: [],
};
const idms = (name: string, source: string, mirrors: string[], never = false): ImageDigestMirrorSet => ({
  metadata: { name },
  spec: {
    imageDigestMirrors: [{ source, mirrors, ...(never ? { mirrorSourcePolicy: 'NeverContactSource' } : {}) }],
  },
});
const imageConfig = (name: string, registrySources: Record<string, string[]>): ImageConfig => ({
  metadata: { name },
  spec: { registrySources },
});
const hosts = (image: string, policy: RegistryPolicy): string[] =>
  pullSources(parseImageReference(image), policy).map((s) => `${s.registry}/${s.repository}`);

describe('clusterRegistryPolicy', () => {
  it('sends a digest reference to the IDMS mirror first, then to the source', () => {
    const policy = clusterRegistryPolicy({
      ...none,
      imageDigestMirrorSets: [idms('m', 'quay.io/team', ['mirror.local:5000/team'])],
    });
    expect(hosts(`quay.io/team/app@${DIGEST}`, policy)).toEqual([
      'mirror.local:5000/team/app',
      'quay.io/team/app',
    ]);
    // IDMS does not apply to tags.
    expect(hosts('quay.io/team/app:1', policy)).toEqual(['quay.io/team/app']);
  });

  it('applies ITMS to tags and ICSP to digests, and never contacts the source when told so', () => {
    const policy = clusterRegistryPolicy({
      ...none,
      imageTagMirrorSets: [
        {
          metadata: { name: 't' },
          spec: { imageTagMirrors: [{ source: 'quay.io/a', mirrors: ['m.io/a'] }] },
        },
      ],
      imageContentSourcePolicies: [
        {
          metadata: { name: 'c' },
          spec: { repositoryDigestMirrors: [{ source: 'quay.io/b', mirrors: ['m.io/b'] }] },
        },
      ],
      imageDigestMirrorSets: [idms('n', 'quay.io/c', ['m.io/c'], true)],
    });
    expect(hosts('quay.io/a/x:1', policy)).toEqual(['m.io/a/x', 'quay.io/a/x']);
    expect(hosts(`quay.io/b/x@${DIGEST}`, policy)).toEqual(['m.io/b/x', 'quay.io/b/x']);
    expect(hosts(`quay.io/c/x@${DIGEST}`, policy)).toEqual(['m.io/c/x']);
  });

  it('takes insecure and blocked registries from image.config.openshift.io/cluster only, plus the flags', () => {
    const policy = clusterRegistryPolicy(
      {
        ...none,
        imageConfigs: [
          imageConfig('cluster', { insecureRegistries: ['plain.local'], blockedRegistries: ['bad.io'] }),
          imageConfig('other', { blockedRegistries: ['quay.io'] }),
        ],
      },
      ['flag.local', 'plain.local'],
    );
    expect(policy.insecureRegistries).toEqual(['plain.local', 'flag.local']);
    expect(() => hosts('bad.io/x:1', policy)).toThrow(/blocked/);
    expect(hosts('quay.io/x:1', policy)).toEqual(['quay.io/x']);
  });

  it('does not depend on the order objects come out of the cache', () => {
    const a = idms('a', 'quay.io/t', ['one.io/t']);
    const b = idms('b', 'quay.io/t', ['two.io/t']);
    expect(clusterRegistryPolicy({ ...none, imageDigestMirrorSets: [b, a] })).toEqual(
      clusterRegistryPolicy({ ...none, imageDigestMirrorSets: [a, b] }),
    );
  });
});

describe('servedKinds', () => {
  it('keeps the kinds listed by discovery and skips missing group versions and subresources', () => {
    const discovery = new Map([
      [
        'config.openshift.io/v1',
        { resources: [{ name: 'imagedigestmirrorsets' }, { name: 'images/status' }] },
      ],
      ['operator.openshift.io/v1alpha1', undefined],
    ]);
    const kinds = [ImageDigestMirrorSets, ImageTagMirrorSets, ImageContentSourcePolicies, ImageConfigs];
    expect(servedKinds(kinds, discovery)).toEqual([ImageDigestMirrorSets]);
  });
});

class FakeInformer implements PolicyInformer {
  objects = new Map<string, KubeObject>();
  private handlers: {
    onAdd?(o: KubeObject): void;
    onUpdate?(a: KubeObject, b: KubeObject): void;
    onDelete?(o: KubeObject): void;
  }[] = [];
  getIndexer() {
    return { list: () => [...this.objects.values()] };
  }
  addEventHandler(h: (typeof this.handlers)[number]): void {
    this.handlers.push(h);
  }
  put(o: KubeObject): void {
    const name = o.metadata?.name ?? '';
    const old = this.objects.get(name);
    this.objects.set(name, o);
    for (const h of this.handlers) {
      if (old) h.onUpdate?.(old, o);
      else h.onAdd?.(o);
    }
  }
  remove(name: string): void {
    const old = this.objects.get(name);
    if (!old) return;
    this.objects.delete(name);
    for (const h of this.handlers) h.onDelete?.(old);
  }
}

describe('RegistryPolicyWatch', () => {
  const setup = (kinds: ResourceType[]) => {
    const informers = new Map(kinds.map((k) => [k, new FakeInformer()]));
    const changes: RegistryPolicy[] = [];
    const watch = new RegistryPolicyWatch({
      kinds,
      informerFor: (t) => informers.get(t) ?? new FakeInformer(),
      extraInsecureRegistries: ['flag.local'],
      onChange: (p) => changes.push(p),
      logger: silentLogger,
    });
    return { watch, changes, informer: (k: ResourceType) => informers.get(k) ?? new FakeInformer() };
  };

  it('follows mirror sets and the image config, reporting each real change once', () => {
    const { watch, changes, informer } = setup([ImageDigestMirrorSets, ImageConfigs]);
    expect(watch.current().insecureRegistries).toEqual(['flag.local']);
    expect(hosts(`src.io/app@${DIGEST}`, watch.current())).toEqual(['src.io/app']);

    informer(ImageDigestMirrorSets).put(idms('m', 'src.io', ['mirror.io']));
    expect(hosts(`src.io/app@${DIGEST}`, watch.current())).toEqual(['mirror.io/app', 'src.io/app']);
    expect(changes).toHaveLength(1);

    // A write that changes nothing the policy uses (labels) is not a change: the cache keeps its entries.
    informer(ImageDigestMirrorSets).put({
      ...idms('m', 'src.io', ['mirror.io']),
      metadata: { name: 'm', labels: { x: 'y' } },
    });
    expect(changes).toHaveLength(1);

    informer(ImageConfigs).put(imageConfig('cluster', { blockedRegistries: ['src.io'] }));
    expect(changes).toHaveLength(2);
    expect(() => hosts('src.io/app:1', watch.current())).toThrow(/blocked/);

    informer(ImageConfigs).remove('cluster');
    informer(ImageDigestMirrorSets).remove('m');
    expect(changes).toHaveLength(4);
    expect(hosts(`src.io/app@${DIGEST}`, watch.current())).toEqual(['src.io/app']);
  });

  it('follows containerRuntimeSearchRegistries: short names are looked for there, in order, from the change on', () => {
    const { watch, changes, informer } = setup([ImageConfigs]);
    const candidates = (image: string): string[] =>
      resolveShortName(image, watch.current().searchRegistries ?? []).candidates.map(formatReference);
    expect(candidates('team/app:1')).toEqual(['docker.io/team/app:1']);

    informer(ImageConfigs).put(
      imageConfig('cluster', { containerRuntimeSearchRegistries: ['reg.corp:5000', 'quay.io'] }),
    );
    expect(changes).toHaveLength(1);
    expect(candidates('team/app:1')).toEqual(['reg.corp:5000/team/app:1', 'quay.io/team/app:1']);
    // The order is the runtime's order: a reordering is a change (the cache must forget).
    informer(ImageConfigs).put(
      imageConfig('cluster', { containerRuntimeSearchRegistries: ['quay.io', 'reg.corp:5000'] }),
    );
    expect(changes).toHaveLength(2);
    // Only the object named cluster counts.
    informer(ImageConfigs).put(imageConfig('other', { containerRuntimeSearchRegistries: ['evil.io'] }));
    expect(changes).toHaveLength(2);
    informer(ImageConfigs).remove('cluster');
    expect(changes).toHaveLength(3);
    expect(candidates('team/app:1')).toEqual(['docker.io/team/app:1']);
  });

  it('treats a kind the cluster does not serve as empty', () => {
    const { watch, changes } = setup([]);
    expect(watch.current().digestMirrors).toEqual([]);
    expect(changes).toEqual([]);
  });
});

describe('discoverPolicyKinds', () => {
  it('skips group versions the API server does not serve and fails on other errors', async () => {
    const client = {
      request: <T>(o: { path: string }): Promise<T> => {
        if (o.path === '/apis/config.openshift.io/v1')
          return Promise.resolve({ resources: [{ name: 'images' }, { name: 'imagetagmirrorsets' }] } as T);
        return Promise.reject(new ApiStatusError('GET', o.path, 404, 'NotFound', 'not found', undefined));
      },
    };
    expect(await discoverPolicyKinds(client, silentLogger)).toEqual([ImageTagMirrorSets, ImageConfigs]);
    const failing = {
      request: <T>(o: { path: string }): Promise<T> =>
        Promise.reject(new ApiStatusError('GET', o.path, 403, 'Forbidden', 'forbidden', undefined)),
    };
    await expect(discoverPolicyKinds(failing, silentLogger)).rejects.toThrow(/403/);
  });
});

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('additionalTrustedCA', () => {
  it('scopes each PEM bundle to the registry host its key names, and reports keys without one', () => {
    expect(
      additionalTrustedCas({
        'b.example..5000': PEM,
        'a.example': PEM,
        broken: 'not a cert',
        'bad..port..key': PEM,
      }),
    ).toEqual({
      bundles: [
        { host: 'a.example', pem: PEM },
        { host: 'b.example:5000', pem: PEM },
      ],
      ignoredKeys: ['bad..port..key', 'broken'],
    });
    expect(additionalTrustedCas(undefined)).toEqual({ bundles: [], ignoredKeys: [] });
  });

  it.each([
    ['registry.example', 'registry.example'],
    ['Registry.Example..5000', 'registry.example:5000'],
    // https's own port is the plain name, as URL.host writes the registry a connection dials.
    ['registry.example..443', 'registry.example'],
    ['127.0.0.1..5000', '127.0.0.1:5000'],
    ['registry.example..99999', undefined],
    ['registry.example..', undefined],
    ['..5000', undefined],
    ['a..1..2', undefined],
  ])('the key %s names the host %s', (key, host) => {
    expect(additionalTrustedCaHost(key)).toBe(host);
  });

  it('keeps every bundle of keys naming the same host, for that host only', () => {
    const other = PEM.replace('MIIB', 'MIIC');
    const byHost = hostCaCertificatesOf(
      additionalTrustedCas({ 'r.example': PEM, 'r.example..443': other, 's.example': other }).bundles,
    );
    expect([...byHost]).toEqual([
      ['r.example', [PEM, other]],
      ['s.example', [other]],
    ]);
  });

  /** An API server holding image config `cluster` (naming `ca`) and ConfigMap openshift-config/ca, if given. */
  function cluster(objects: Record<string, unknown>) {
    const paths: string[] = [];
    return {
      paths,
      request: <T>(o: { path: string }): Promise<T> => {
        paths.push(o.path);
        if (o.path === '/apis/config.openshift.io/v1')
          return Promise.resolve({ resources: [{ name: 'images' }] } as T);
        const found = objects[o.path];
        return found
          ? Promise.resolve(found as T)
          : Promise.reject(new ApiStatusError('GET', o.path, 404, 'NotFound', 'not found', undefined));
      },
    };
  }

  it('reads the ConfigMap named by the cluster image config, with the policy, as the operator does', async () => {
    const api = cluster({
      '/apis/config.openshift.io/v1/images': {
        items: [
          {
            metadata: { name: 'cluster' },
            spec: {
              additionalTrustedCA: { name: 'ca' },
              registrySources: { insecureRegistries: ['plain.example'] },
            },
          },
        ],
      },
      '/apis/config.openshift.io/v1/images/cluster': {
        metadata: { name: 'cluster' },
        spec: { additionalTrustedCA: { name: 'ca' } },
      },
      '/api/v1/namespaces/openshift-config/configmaps/ca': { data: { '127.0.0.1..5000': PEM } },
    });
    const trust = await readRegistryTrust(api, silentLogger);
    expect([...trust.hostCaCertificates]).toEqual([['127.0.0.1:5000', [PEM]]]);
    expect(trust.policy.insecureRegistries).toEqual(['plain.example']);
  });

  it('trusts nothing extra when the kind is not served or the ConfigMap is missing', async () => {
    const api = cluster({
      '/apis/config.openshift.io/v1/images/cluster': { spec: { additionalTrustedCA: { name: 'gone' } } },
    });
    expect((await readAdditionalTrustedCas(api, [], silentLogger)).size).toBe(0);
    expect(api.paths).toEqual([]);
    expect((await readAdditionalTrustedCas(api, [ImageConfigs], silentLogger)).size).toBe(0);
  });
});

describe('TrustedCaWatch: registry CAs follow the ConfigMap while the operator runs', () => {
  const PEM_A = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
  const PEM_B = '-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n';
  const CM = '/api/v1/namespaces/openshift-config/configmaps/registry-cas';
  const IMAGE = '/apis/config.openshift.io/v1/images/cluster';

  /** A mutable API server: `objects` by path; `failing` makes every GET fail with 503. */
  function server() {
    const state = {
      objects: new Map<string, unknown>([
        [IMAGE, { metadata: { name: 'cluster' }, spec: { additionalTrustedCA: { name: 'registry-cas' } } }],
        [CM, { data: { 'registry.example': PEM_A } }],
      ]),
      failing: false,
      /** GETs of any ConfigMap, answered or not. */
      configMapReads: 0,
    };
    const request = <T>(o: { path: string }): Promise<T> => {
      if (o.path.includes('/configmaps/')) state.configMapReads++;
      if (state.failing)
        return Promise.reject(
          new ApiStatusError('GET', o.path, 503, 'ServiceUnavailable', 'down', undefined),
        );
      const found = state.objects.get(o.path);
      return found !== undefined
        ? Promise.resolve(found as T)
        : Promise.reject(new ApiStatusError('GET', o.path, 404, 'NotFound', 'not found', undefined));
    };
    return { state, client: { request } };
  }

  function recordingLogger(lines: string[]): Logger {
    const logger: Logger = {
      error: (_o, msg) => lines.push(`error ${msg ?? ''}`),
      warn: (_o, msg) => lines.push(`warn ${msg ?? ''}`),
      info: (_o, msg) => lines.push(`info ${msg ?? ''}`),
      debug() {},
      trace() {},
      child: () => logger,
    };
    return logger;
  }

  /** An image config informer whose update events the test fires by hand. */
  function imageConfigInformer() {
    const handlers: { onUpdate?(a: KubeObject, b: KubeObject): void }[] = [];
    const informer: PolicyInformer = {
      getIndexer: () => ({ list: () => [] }),
      addEventHandler: (h) => handlers.push(h),
    };
    const update = (): void => {
      for (const h of handlers)
        h.onUpdate?.({ metadata: { name: 'cluster' } }, { metadata: { name: 'cluster' } });
    };
    return { informer, update };
  }

  async function started(options: { imageConfigs?: PolicyInformer } = {}) {
    const { state, client } = server();
    const clock = new FakeClock();
    /** Each change as host -> bundles. */
    const changes: Record<string, readonly string[]>[] = [];
    const logs: string[] = [];
    const watch = new TrustedCaWatch({
      client,
      kinds: [ImageConfigs],
      initial: await fetchAdditionalTrustedCa(client, [ImageConfigs]),
      onChange: (byHost) => changes.push(Object.fromEntries(byHost)),
      clock,
      logger: recordingLogger(logs),
      ...options,
    });
    const stop = new AbortController();
    const running = watch.start(stop.signal);
    return { state, clock, changes, logs, stop: () => (stop.abort(), running) };
  }

  it('picks up a rotated CA at the next interval, once, and not before', async () => {
    const w = await started();
    w.state.objects.set(CM, { data: { 'registry.example': PEM_B } });
    await w.clock.advance(TRUSTED_CA_POLL_INTERVAL_MS - 1);
    expect(w.changes).toEqual([]);
    await w.clock.advance(1);
    expect(w.changes).toEqual([{ 'registry.example': [PEM_B] }]);
    await w.clock.advance(TRUSTED_CA_POLL_INTERVAL_MS * 3);
    expect(w.changes).toEqual([{ 'registry.example': [PEM_B] }]);
    expect(w.logs).toContain(
      'info registry CAs (additionalTrustedCA) changed; each trusted for its own registry from the next inspection on',
    );
    await w.stop();
  });

  it('keeps the CAs held while the API server fails, and drops them when the ConfigMap is deleted', async () => {
    const w = await started();
    w.state.failing = true;
    await w.clock.advance(TRUSTED_CA_POLL_INTERVAL_MS * 2);
    expect(w.changes).toEqual([]);
    expect(w.logs.filter((l) => l.startsWith('warn could not re-read'))).toHaveLength(2);
    w.state.failing = false;
    w.state.objects.delete(CM);
    await w.clock.advance(TRUSTED_CA_POLL_INTERVAL_MS);
    expect(w.changes).toEqual([{}]);
    // The admin is told once which ConfigMap is missing, not every minute.
    await w.clock.advance(TRUSTED_CA_POLL_INTERVAL_MS * 5);
    expect(w.logs.filter((l) => l.includes('does not exist'))).toHaveLength(1);
    await w.stop();
  });

  it('reads at once when the image config changes (a new ConfigMap named), without waiting for the interval', async () => {
    const imageConfigs = imageConfigInformer();
    const w = await started({ imageConfigs: imageConfigs.informer });
    w.state.objects.set(IMAGE, {
      metadata: { name: 'cluster' },
      spec: { additionalTrustedCA: { name: 'other' } },
    });
    w.state.objects.set('/api/v1/namespaces/openshift-config/configmaps/other', { data: { r: PEM_B } });
    imageConfigs.update();
    await w.clock.advance(0);
    expect(w.changes).toEqual([{ r: [PEM_B] }]);
    await w.stop();
  });

  it('folds a burst of image config events (190 in 2 s) into one read and one trailing read that sees the last', async () => {
    const imageConfigs = imageConfigInformer();
    const w = await started({ imageConfigs: imageConfigs.informer });
    const before = w.state.configMapReads;
    for (let event = 1; event <= 190; event++) {
      // Only the last event changes anything: the trailing read must see it.
      if (event === 190) w.state.objects.set(CM, { data: { 'registry.example': PEM_B } });
      imageConfigs.update();
      await w.clock.advance(10);
    }
    await w.clock.advance(TRUSTED_CA_MIN_READ_INTERVAL_MS);
    expect(w.state.configMapReads - before).toBe(2);
    expect(w.changes).toEqual([{ 'registry.example': [PEM_B] }]);
    // Quiet again: the next read is the interval's.
    await w.clock.advance(TRUSTED_CA_POLL_INTERVAL_MS - TRUSTED_CA_MIN_READ_INTERVAL_MS - 1);
    expect(w.state.configMapReads - before).toBe(2);
    await w.stop();
    expect(w.clock.pendingTimers()).toBe(0);
  });

  it('stops promptly while it folds a burst, with no timer left', async () => {
    const imageConfigs = imageConfigInformer();
    const w = await started({ imageConfigs: imageConfigs.informer });
    imageConfigs.update();
    await w.clock.advance(0);
    imageConfigs.update();
    await w.clock.advance(0);
    await w.stop();
    expect(w.clock.pendingTimers()).toBe(0);
  });

  it('stops promptly when the operator stops, with no timer left', async () => {
    const w = await started();
    await w.stop();
    expect(w.clock.pendingTimers()).toBe(0);
  });
});

describe('imageAdmission: what the nodes’ policy.json refuses, from the cluster API', () => {
  const verdict = (
    objects: Partial<RegistryPolicyObjects>,
    image: string,
    namespace?: string,
  ): { admitted: boolean; rule?: string; signedBy?: string[] } => {
    const policy = clusterRegistryPolicy({ ...none, ...objects }).imageAdmission;
    if (policy === undefined) return { admitted: true };
    const v = admissionVerdict(parseImageReference(image), policy, namespace);
    return v.admitted
      ? {
          admitted: true,
          ...(v.signatureRequiredBy ? { signedBy: v.signatureRequiredBy.map((s) => s.rule) } : {}),
        }
      : { admitted: false, rule: v.rule };
  };
  const cip = (name: string, scopes: string[], policyType = 'PublicKey'): SignaturePolicy => ({
    metadata: { name },
    spec: { scopes, policy: { rootOfTrust: { policyType } } },
  });
  const ip = (namespace: string, name: string, scopes: string[]): SignaturePolicy => ({
    metadata: { name, namespace },
    spec: { scopes, policy: { rootOfTrust: { policyType: 'FulcioCAWithRekor' } } },
  });
  const allowed = (...r: string[]) => ({ imageConfigs: [imageConfig('cluster', { allowedRegistries: r })] });
  const blocked = (...r: string[]) => ({ imageConfigs: [imageConfig('cluster', { blockedRegistries: r })] });

  it.each<[string, Partial<RegistryPolicyObjects>, string, string | undefined, ReturnType<typeof verdict>]>([
    ['no policy: everything admitted', {}, 'evil.example.com/app:1', undefined, { admitted: true }],
    ['allowed registry', allowed('quay.io'), 'quay.io/a/b:1', undefined, { admitted: true }],
    [
      'a registry not in allowedRegistries',
      allowed('quay.io'),
      'evil.example.com/app:1',
      undefined,
      { admitted: false, rule: 'image.config.openshift.io/cluster allowedRegistries' },
    ],
    [
      'a blocked registry',
      blocked('evil.example.com'),
      'evil.example.com/app:1',
      undefined,
      { admitted: false, rule: 'image.config.openshift.io/cluster blockedRegistries' },
    ],
    [
      'both lists set (the MCO renders neither): only blockedRegistries is enforced',
      {
        imageConfigs: [
          imageConfig('cluster', { allowedRegistries: ['quay.io'], blockedRegistries: ['bad.io'] }),
        ],
      },
      'other.example.com/app:1',
      undefined,
      { admitted: true },
    ],
    [
      'only the object named cluster counts',
      { imageConfigs: [imageConfig('other', { allowedRegistries: ['quay.io'] })] },
      'evil.example.com/app:1',
      undefined,
      { admitted: true },
    ],
    [
      'a ClusterImagePolicy scope requires a signature (not verified: admitted, and said)',
      { clusterImagePolicies: [cip('openshift', ['quay.io/openshift-release-dev/ocp-release'])] },
      'quay.io/openshift-release-dev/ocp-release@' + DIGEST,
      undefined,
      { admitted: true, signedBy: ['ClusterImagePolicy openshift (policyType PublicKey)'] },
    ],
    [
      'a ClusterImagePolicy under allowedRegistries',
      { ...allowed('quay.io'), clusterImagePolicies: [cip('p', ['quay.io/signed'])] },
      'quay.io/signed/app:1',
      undefined,
      { admitted: true, signedBy: ['ClusterImagePolicy p (policyType PublicKey)'] },
    ],
    [
      'an ImagePolicy applies to pods of its namespace',
      { imagePolicies: [ip('team-a', 'sig', ['quay.io/team'])] },
      'quay.io/team/app:1',
      'team-a',
      { admitted: true, signedBy: ['ImagePolicy sig (policyType FulcioCAWithRekor) in namespace team-a'] },
    ],
    [
      'an ImagePolicy does not apply to other namespaces',
      { imagePolicies: [ip('team-a', 'sig', ['quay.io/team'])] },
      'quay.io/team/app:1',
      'team-b',
      { admitted: true },
    ],
    [
      'an ImagePolicy scope inside a ClusterImagePolicy scope is dropped, as the MCO does',
      {
        clusterImagePolicies: [cip('c', ['quay.io'])],
        imagePolicies: [ip('team-a', 'sig', ['quay.io/team'])],
      },
      'quay.io/team/app:1',
      'team-a',
      { admitted: true, signedBy: ['ClusterImagePolicy c (policyType PublicKey)'] },
    ],
  ])('%s', (_name, objects, image, namespace, expected) => {
    expect(verdict(objects, image, namespace)).toEqual(expected);
  });

  it('is part of the policy: a change of it is a change (the inspection cache forgets)', () => {
    expect(
      samePolicy(clusterRegistryPolicy({ ...none, ...allowed('quay.io') }), clusterRegistryPolicy(none)),
    ).toBe(false);
  });
});

describe('scopeNestedInside (the MCO’s ScopeIsNestedInsideScope)', () => {
  it.each<[string, string, boolean]>([
    ['quay.io', 'quay.io', true],
    ['quay.io/team', 'quay.io', true],
    ['quay.io.evil.com', 'quay.io', false],
    ['quay.iox/team', 'quay.io', false],
    ['a.example.com', '*.example.com', true],
    ['*.a.example.com', '*.example.com', true],
    ['a.example.com/team', '*.example.com', true],
    ['a.example.com:5000', '*.example.com', true],
    ['quay.io/bar.example.com', '*.example.com', false],
    ['quay/bar.foo:400', '*.foo', false],
    ['example.com', '*.example.com', false],
  ])('%s inside %s: %s', (inner, outer, expected) => {
    expect(scopeNestedInside(inner, outer)).toBe(expected);
  });
});
