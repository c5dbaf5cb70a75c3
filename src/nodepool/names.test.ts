import { describe, expect, it } from 'vitest';
import {
  fnv32aHex,
  hostedControlPlaneNamespace,
  nameOfNamespacedName,
  performanceProfileConfigMapName,
  performanceTunedName,
  runtimeClassName,
  shortenName,
  statusConfigMapName,
  tunedStatusReference,
} from './names.js';

describe('fnv32aHex', () => {
  it('matches the published FNV-1a 32-bit test vectors', () => {
    expect(fnv32aHex('')).toBe('811c9dc5');
    expect(fnv32aHex('a')).toBe('e40c292c');
    expect(fnv32aHex('foobar')).toBe('bf9cf968');
  });
});

describe('shortenName', () => {
  it('joins base and suffix when the result fits', () => {
    expect(shortenName('perfprof-cm', 'nodepool1', 63)).toBe('perfprof-cm-nodepool1');
  });

  it('keeps the suffix and hashes the base when too long', () => {
    const base = 'a'.repeat(60);
    const name = shortenName(base, 'pool', 63);
    expect(name).toHaveLength(63);
    expect(name).toBe(`${'a'.repeat(63 - 10 - 4)}-${fnv32aHex(base)}-pool`);
  });

  it('drops an over-long suffix and hashes the whole name', () => {
    const name = shortenName('cm', 'p'.repeat(70), 63);
    expect(name).toBe(`cm-${fnv32aHex(`cm-${'p'.repeat(70)}`)}`);
    expect(name.length).toBeLessThanOrEqual(63);
  });

  it('distinguishes long names that share a prefix', () => {
    const a = performanceProfileConfigMapName(`${'x'.repeat(60)}a`, 'np');
    const b = performanceProfileConfigMapName(`${'x'.repeat(60)}b`, 'np');
    expect(a).not.toBe(b);
  });
});

describe('HyperShift/NTO names', () => {
  it('derives the HCP namespace, replacing dots in the cluster name', () => {
    expect(hostedControlPlaneNamespace('clusters', 'hostedcluster01')).toBe('clusters-hostedcluster01');
    expect(hostedControlPlaneNamespace('clusters', 'my.cluster')).toBe('clusters-my-cluster');
  });

  it('names the status ConfigMap after the PP ConfigMap', () => {
    expect(statusConfigMapName(performanceProfileConfigMapName('perfprof-cm', 'nodepool1'))).toBe(
      'status-perfprof-cm-nodepool1',
    );
  });

  it('names per-NodePool Tuned objects with a hash of the NodePool name', () => {
    expect(performanceTunedName('perfprof', 'nodepool1')).toBe(
      `openshift-node-performance-perfprof-${fnv32aHex('nodepool1')}`,
    );
    expect(tunedStatusReference('perfprof', 'np')).toBe(
      `openshift-cluster-node-tuning-operator/openshift-node-performance-perfprof-${fnv32aHex('np')}`,
    );
    expect(runtimeClassName('perfprof')).toBe('performance-perfprof');
  });

  it('reads the name out of namespace/name', () => {
    expect(nameOfNamespacedName('clusters/nodepool1')).toBe('nodepool1');
    expect(nameOfNamespacedName('nodepool1')).toBe('nodepool1');
  });
});
