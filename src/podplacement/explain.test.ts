import { describe, expect, it } from 'vitest';
import { clusterConfig, pod } from './builders.js';
import { assessExplanation, renderExplanation } from './explain.js';
import type { ImageArchitectures } from './placement-plan.js';

const inspection = new Map<string, ImageArchitectures>([
  ['r/m:1', { archs: ['amd64', 'arm64'] }],
  ['r/x:1', { error: 'unauthorized: authentication required' }],
]);
const base = { namespace: 'apps', operatorNamespace: 'op', podPlacementConfigs: [], inspection };

describe('explain', () => {
  it('shows the required terms the operator would write', () => {
    const e = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/m:1').build(),
      clusterConfig: clusterConfig(),
    });
    expect(e.gated).toBe(true);
    expect(e.outcome).toBe('placed');
    const text = renderExplanation(e);
    expect(text).toContain('r/m:1: amd64, arm64');
    expect(text).toContain('kubernetes.io/arch In [amd64, arm64]');
  });

  it('shows where retries end for an image that cannot be inspected', () => {
    const e = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/x:1').build(),
      clusterConfig: clusterConfig({ fallbackArchitecture: 'arm64' }),
    });
    expect(e.outcome).toBe('fallback');
    const text = renderExplanation(e);
    expect(text).toContain('ERROR unauthorized');
    expect(text).toContain('kubernetes.io/arch In [arm64]');
    expect(text).toMatch(/retries 5 times/);
  });

  it('says why a pod is not gated', () => {
    const e = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/m:1').withNodeName('n1').build(),
      clusterConfig: clusterConfig(),
    });
    expect(e.gated).toBe(false);
    expect(renderExplanation(e)).toContain('spec.nodeName is set');
    const off = assessExplanation({
      ...base,
      pod: pod('web', 'apps').withImages('r/m:1').build(),
      clusterConfig: undefined,
    });
    expect(off.notes.join()).toContain('no ClusterPodPlacementConfig');
  });
});
