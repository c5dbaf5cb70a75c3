import { describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '../runtime/index.js';
import { clusterConfig, podPlacementConfig } from './builders.js';
import {
  ClusterConfigValidator,
  PodPlacementConfigValidator,
  validateClusterConfig,
  validateClusterConfigDeletion,
  validatePodPlacementConfig,
  type ConfigReader,
} from './config-validation.js';

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
  const reader = (
    exists: boolean,
    configs: ReturnType<typeof ppc>[],
  ): ConfigReader & { namespaces: (string | undefined)[] } => {
    const namespaces: (string | undefined)[] = [];
    return {
      namespaces,
      clusterConfigExists: async () => exists,
      podPlacementConfigs: async (ns) => {
        namespaces.push(ns);
        return configs;
      },
    };
  };

  it('PodPlacementConfig handler reads the request namespace and denies with 422', async () => {
    const r = reader(true, [ppc('a', 3)]);
    const result = await new PodPlacementConfigValidator(r).handle(
      request('CREATE', ppc('b', 3), 'ns'),
      new AbortController().signal,
    );
    expect(result.allowed).toBe(false);
    expect(result.status?.code).toBe(422);
    expect(r.namespaces).toEqual(['ns']);
  });

  it('ClusterPodPlacementConfig handler lists configs cluster-wide on DELETE', async () => {
    const r = reader(true, [ppc('a', 3)]);
    const result = await new ClusterConfigValidator(r).handle(
      request('DELETE', undefined),
      new AbortController().signal,
    );
    expect(result.allowed).toBe(false);
    expect(r.namespaces).toEqual([undefined]);
    const ok = await new ClusterConfigValidator(reader(true, [])).handle(
      request('UPDATE', clusterConfig()),
      new AbortController().signal,
    );
    expect(ok.allowed).toBe(true);
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
