import { describe, expect, it } from 'vitest';
import { defaultNodeSpecs, fakeNode } from './nodes.js';

describe('fake nodes', () => {
  it('default topology: one control-plane node and two workers of each of four architectures', () => {
    const specs = defaultNodeSpecs();
    expect(specs.filter((s) => s.role === 'control-plane')).toHaveLength(1);
    for (const arch of ['amd64', 'arm64', 'ppc64le', 's390x']) {
      expect(specs.filter((s) => s.role === 'worker' && s.architecture === arch)).toHaveLength(2);
    }
  });

  it('labels nodes like a kubelet would, and taints control-plane nodes', () => {
    const worker = fakeNode({ name: 'w', architecture: 'arm64', role: 'worker' }, 'v1.37.2');
    expect(worker.metadata?.labels).toMatchObject({
      'kubernetes.io/arch': 'arm64',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/hostname': 'w',
      'node-role.kubernetes.io/worker': '',
    });
    expect(worker.status?.nodeInfo?.architecture).toBe('arm64');
    expect(worker.spec?.taints ?? []).toHaveLength(0);
    const cp = fakeNode({ name: 'cp', architecture: 'amd64', role: 'control-plane' }, 'v1.37.2');
    expect(cp.metadata?.labels).toHaveProperty('node-role.kubernetes.io/control-plane');
    expect(cp.spec?.taints).toEqual([{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]);
  });
});
