import { describe, expect, it } from 'vitest';
import { type AdmissionRequest } from '../runtime/index.js';
import { clusterConfig, podPlacementConfig } from './builders.js';
import {
  ClusterConfigValidator,
  PodPlacementConfigValidator,
  validateClusterConfig,
  validateClusterConfigDeletion,
  validatePodPlacementConfig,
  type ConfigReader,
} from './config-validation.js';
import { FakeClock } from '../runtime/testing/index.js';

const ppc = (name: string, priority: number) =>
  podPlacementConfig(name, 'ns', { priority, platforms: [{ architecture: 'arm64', weight: 10 }] });

describe('PodPlacementConfig validation', () => {
  it('needs the cluster config first', () => {
    const v = validatePodPlacementConfig({
      operation: 'CREATE',
      config: ppc('a', 1),
      clusterConfigExists: false,
      namespaceConfigs: [],
    });
    expect(v).toEqual({
      allowed: false,
      message: expect.stringContaining('you must create a ClusterPodPlacementConfig'),
    });
  });

  it('refuses a priority already used in the namespace, naming the owner', () => {
    const v = validatePodPlacementConfig({
      operation: 'CREATE',
      config: ppc('b', 5),
      clusterConfigExists: true,
      namespaceConfigs: [ppc('a', 5)],
    });
    expect(v.allowed).toBe(false);
    expect(!v.allowed && v.message).toContain('priority 5 is already used by PodPlacementConfig a');
  });

  it('allows an update that keeps its own priority, refuses one that takes another', () => {
    const existing = [ppc('a', 5), ppc('b', 6)];
    expect(
      validatePodPlacementConfig({
        operation: 'UPDATE',
        config: ppc('a', 5),
        old: ppc('a', 5),
        clusterConfigExists: true,
        namespaceConfigs: existing,
      }).allowed,
    ).toBe(true);
    expect(
      validatePodPlacementConfig({
        operation: 'UPDATE',
        config: ppc('a', 6),
        old: ppc('a', 5),
        clusterConfigExists: true,
        namespaceConfigs: existing,
      }).allowed,
    ).toBe(false);
  });

  it('refuses duplicate architectures', () => {
    const dup = podPlacementConfig('d', 'ns', {
      platforms: [
        { architecture: 'amd64', weight: 1 },
        { architecture: 'amd64', weight: 2 },
      ],
    });
    const v = validatePodPlacementConfig({
      operation: 'CREATE',
      config: dup,
      clusterConfigExists: true,
      namespaceConfigs: [],
    });
    expect(!v.allowed && v.message).toContain('duplicate architecture amd64');
  });
});

describe('ClusterPodPlacementConfig deletion', () => {
  it('is refused while PodPlacementConfigs exist', () => {
    expect(validateClusterConfigDeletion(0)).toEqual({ allowed: true });
    expect(validateClusterConfigDeletion(2)).toEqual({
      allowed: false,
      message: expect.stringContaining('2 PodPlacementConfig(s) still exist'),
    });
  });
});

describe('validating handlers', () => {
  const request = (
    operation: AdmissionRequest['operation'],
    object: unknown,
    namespace?: string,
  ): AdmissionRequest => ({
    uid: 'u',
    kind: { group: 'multiarch.openshift.io', version: 'v1beta1', kind: 'X' },
    resource: { group: 'multiarch.openshift.io', version: 'v1beta1', resource: 'x' },
    operation,
    userInfo: {},
    object,
    namespace,
  });
  /** Cache and API server may differ (the cache lags); `namespaces` records the API reads. */
  const reader = (
    exists: boolean,
    configs: ReturnType<typeof ppc>[],
    api: { exists?: boolean; configs?: ReturnType<typeof ppc>[] } = {},
  ): ConfigReader & { namespaces: string[]; gets: () => number; counts: () => number } => {
    const namespaces: string[] = [];
    let gets = 0;
    let counts = 0;
    return {
      namespaces,
      gets: () => gets,
      counts: () => counts,
      cachedClusterConfigExists: () => exists,
      clusterConfigExists: async () => {
        gets++;
        return api.exists ?? exists;
      },
      cachedPodPlacementConfigs: () => configs,
      podPlacementConfigs: async (ns) => {
        namespaces.push(ns);
        return api.configs ?? configs;
      },
      cachedPodPlacementConfigCount: () => {
        counts++;
        return configs.length;
      },
    };
  };
  const signal = new AbortController().signal;

  it('PodPlacementConfig handler refuses a clash the cache shows with 422, without reading the API server', async () => {
    const r = reader(true, [ppc('a', 3)]);
    const result = await new PodPlacementConfigValidator(r).handle(
      request('CREATE', ppc('b', 3), 'ns'),
      signal,
    );
    expect(result.allowed).toBe(false);
    expect(result.status?.code).toBe(422);
    expect(r.namespaces).toEqual([]);
  });

  it('confirms what the cache would admit: a config created a moment ago is seen', async () => {
    const backToBack = reader(true, [], { configs: [ppc('a', 3)] });
    const clash = await new PodPlacementConfigValidator(backToBack).handle(
      request('CREATE', ppc('b', 3), 'ns'),
      signal,
    );
    expect(clash.allowed).toBe(false);
    expect(backToBack.namespaces).toEqual(['ns']);
    const justCreated = reader(false, [], { exists: true });
    const ok = await new PodPlacementConfigValidator(justCreated).handle(
      request('CREATE', ppc('b', 3), 'ns'),
      signal,
    );
    expect(ok.allowed).toBe(true);
    expect(justCreated.gets()).toBe(1);
  });

  it('spends at most its read budget however many reviews arrive; beyond it the cache decides', async () => {
    const clock = new FakeClock();
    const r = reader(true, []);
    const validator = new PodPlacementConfigValidator(r, {
      clock,
      confirmingReadsPerSecond: 5,
      confirmingReadsBurst: 20,
    });
    const flood = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const result = await validator.handle(request('CREATE', ppc(`p${i}`, i % 256), 'ns'), signal);
        expect(result.allowed).toBe(true);
      }
    };
    await flood(1_000);
    expect(r.namespaces).toHaveLength(20);
    clock.step(1_000);
    await flood(1_000);
    expect(r.namespaces).toHaveLength(25);
    expect(r.gets()).toBe(0); // the cached cluster config needs no confirmation
  });

  it('refuses a PodPlacementConfig review without a namespace before reading anything', async () => {
    const r = reader(true, []);
    const anonymous = ppc('b', 3);
    delete anonymous.metadata.namespace;
    const result = await new PodPlacementConfigValidator(r).handle(
      request('CREATE', anonymous, undefined),
      signal,
    );
    expect(result.allowed).toBe(false);
    expect(result.status?.code).toBe(400);
    expect(r.namespaces).toEqual([]);
  });

  it('ClusterPodPlacementConfig handler counts configs in the cache on DELETE, never listing them', async () => {
    const r = reader(true, [ppc('a', 3)]);
    for (let i = 0; i < 50; i++) {
      const result = new ClusterConfigValidator(r).handle(request('DELETE', undefined));
      expect(result.allowed).toBe(false);
    }
    expect(r.namespaces).toEqual([]);
    expect(r.counts()).toBe(50);
    const ok = new ClusterConfigValidator(reader(true, [])).handle(request('UPDATE', clusterConfig()));
    expect(ok.allowed).toBe(true);
  });

  it('admits a ClusterPodPlacementConfig asking for the exec format error monitor, warning of what it misses', () => {
    const validator = new ClusterConfigValidator(reader(true, []));
    const monitor = (enabled: boolean) => {
      const config = clusterConfig();
      config.spec = { ...config.spec, plugins: { execFormatErrorMonitor: { enabled } } };
      return config;
    };
    for (const operation of ['CREATE', 'UPDATE'] as const) {
      const result = validator.handle(request(operation, monitor(true)));
      expect(result.allowed).toBe(true);
      expect(result.warnings).toEqual([
        'spec.plugins.execFormatErrorMonitor.enabled: Tessera detects the exec format errors the kubelet ' +
          'reports, without an eBPF DaemonSet; a failed exec in a container that keeps running is not seen, and ' +
          'no ENoExecEvents are made.',
      ]);
      // The API server may cut a warning longer than this.
      expect(result.warnings?.[0]?.length).toBeLessThanOrEqual(256);
    }
    // Written through v1alpha1, the plugins travel in the annotation a v1alpha1 read returned.
    const alpha = {
      apiVersion: 'multiarch.openshift.io/v1alpha1',
      kind: 'ClusterPodPlacementConfig',
      metadata: {
        name: 'cluster',
        annotations: {
          'multiarch.openshift.io/v1beta1-spec': JSON.stringify({
            plugins: { execFormatErrorMonitor: { enabled: true } },
          }),
        },
      },
      spec: { logVerbosity: 'Debug' },
    };
    expect(validator.handle(request('UPDATE', alpha)).warnings).toHaveLength(1);
    expect(validator.handle(request('CREATE', monitor(false))).warnings).toBeUndefined();
    expect(validator.handle(request('CREATE', clusterConfig())).warnings).toBeUndefined();
    // A refused config gets the refusal only.
    const misnamed = monitor(true);
    misnamed.metadata.name = 'other';
    const refused = validator.handle(request('CREATE', misnamed));
    expect(refused.allowed).toBe(false);
    expect(refused.warnings).toBeUndefined();
  });
});

describe('label selector validity at admission', () => {
  it('refuses a PodPlacementConfig whose labelSelector has an invalid key or value, naming it', () => {
    const config = ppc('a', 1);
    config.spec.labelSelector = { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['a b'] }] };
    const v = validatePodPlacementConfig({
      operation: 'CREATE',
      config,
      clusterConfigExists: true,
      namespaceConfigs: [],
    });
    expect(v).toEqual({
      allowed: false,
      message: expect.stringMatching(
        /^spec\.labelSelector is invalid: matchExpressions\[0\]: label value "a b"/,
      ),
    });
  });

  it('refuses a ClusterPodPlacementConfig whose namespaceSelector is invalid', () => {
    const config = clusterConfig({
      namespaceSelector: { matchExpressions: [{ key: 'bad key', operator: 'DoesNotExist' }] },
    });
    expect(validateClusterConfig(config)).toEqual({
      allowed: false,
      message: expect.stringContaining('spec.namespaceSelector is invalid'),
    });
  });
});
