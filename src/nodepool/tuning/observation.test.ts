import { describe, expect, it } from 'vitest';
import type { ConfigMap } from '../api/types.js';
import { kubeletConfigConditions, observeComponents, unreadableObservation } from './observation.js';

const kubeletConfig = (config: string): ConfigMap => ({
  metadata: { namespace: 'clusters-hc', name: 'kubeletconfig-perf-np1' },
  data: { config },
});

describe('kubeletConfigConditions', () => {
  it('reads the conditions of the NTO-generated KubeletConfig, skipping entries without a type', () => {
    const cm = kubeletConfig(
      'kind: KubeletConfig\nstatus:\n  conditions:\n  - type: Success\n    status: "True"\n  - status: "False"\n',
    );
    expect(kubeletConfigConditions(cm)).toEqual({
      ok: true,
      value: { conditions: [{ type: 'Success', status: 'True' }] },
    });
  });

  it('treats a KubeletConfig without status as no conditions', () => {
    expect(kubeletConfigConditions(kubeletConfig('kind: KubeletConfig\n'))).toEqual({
      ok: true,
      value: { conditions: [] },
    });
  });

  it('reports a broken or hostile manifest as a read failure naming the ConfigMap', () => {
    const notAList = kubeletConfigConditions(kubeletConfig('status:\n  conditions: yes\n'));
    expect(notAList).toEqual({
      ok: false,
      error: 'KubeletConfig in ConfigMap clusters-hc/kubeletconfig-perf-np1: status.conditions is not a list',
    });
    const deep = kubeletConfigConditions(kubeletConfig('['.repeat(1_000) + ']'.repeat(1_000)));
    expect(deep.ok).toBe(false);
    expect(deep.ok ? '' : deep.error).toMatch(
      /^cannot decode KubeletConfig in ConfigMap clusters-hc\/kubeletconfig-perf-np1: .*deeper/,
    );
  });
});

describe('observations', () => {
  it('lists the NodePool’s node names and passes the Tuned Profiles through', () => {
    const obs = observeComponents({
      nodes: [{ metadata: { name: 'n1' } }, { metadata: { name: 'n2' } }],
      tunedProfiles: [],
    });
    expect(obs).toEqual({
      nodeNames: { ok: true, value: ['n1', 'n2'] },
      tunedProfiles: { ok: true, value: [] },
    });
  });

  it('says, in NTO’s words, that Tuned Profiles cannot be listed and since when', () => {
    const obs = unreadableObservation('pp', undefined, 60_000);
    expect(obs.tunedProfiles).toEqual(obs.nodeNames);
    expect(obs.nodeNames.ok ? '' : obs.nodeNames.error).toMatch(
      /^Cannot list Tuned Profiles to match with profile pp: .* for over 60s \(no successful read yet\)/,
    );
  });
});
