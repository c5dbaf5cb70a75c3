import { describe, expect, it } from 'vitest';
import { ARCH_LABEL, LABELS } from '../podplacement/constants.js';
import {
  placementRow,
  renderPlacementSummary,
  type DemoPod,
  type PlacementFacts,
} from './podplacement-summary.js';

const facts: PlacementFacts = {
  nodeArch: new Map([['worker-arm64-0', 'arm64']]),
  archsByRef: new Map([
    ['reg:5000/demo/tools:1', ['amd64', 'arm64', 'ppc64le', 's390x']],
    ['reg:5000/demo/legacy:1', ['amd64']],
    ['reg:5000/demo/web:1', ['amd64', 'arm64']],
  ]),
  registryHost: 'reg:5000',
};

describe('pod placement demo summary', () => {
  it('names the architectures every image of the pod has and the ones the operator required', () => {
    const pod: DemoPod = {
      metadata: { name: 'tools-1', labels: { [LABELS.nodeAffinity]: 'set' } },
      spec: {
        nodeName: 'worker-amd64-0',
        containers: [{ image: 'reg:5000/demo/tools:1' }],
        initContainers: [{ image: 'reg:5000/demo/legacy:1' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: ARCH_LABEL, values: ['amd64'] }] }],
            },
          },
        },
      },
    };
    expect(placementRow(pod, facts)).toEqual({
      pod: 'tools-1',
      images: 'demo/legacy:1,demo/tools:1',
      supported: 'amd64',
      node: 'worker-amd64-0',
      nodeArch: '-',
      why: `operator required ${ARCH_LABEL} in [amd64]`,
    });
  });

  it('tells a gated pod from one the operator did not place', () => {
    const base: DemoPod = {
      metadata: { name: 'web-1' },
      spec: { containers: [{ image: 'reg:5000/demo/web:1' }] },
    };
    expect(placementRow({ ...base, spec: { ...base.spec, schedulingGates: [{}] } }, facts).why).toBe(
      'still gated (being inspected)',
    );
    const row = placementRow({ ...base, spec: { ...base.spec, nodeName: 'worker-arm64-0' } }, facts);
    expect(row.why).toBe('not placed by the operator');
    expect(row.nodeArch).toBe('arm64');
    expect(placementRow(base, facts).node).toBe('(pending)');
  });

  it('renders a table whose columns line up', () => {
    const rows = [
      placementRow(
        { metadata: { name: 'web-1' }, spec: { containers: [{ image: 'reg:5000/demo/web:1' }] } },
        facts,
      ),
    ];
    const [head, line] = renderPlacementSummary(rows).split('\n');
    expect(head?.indexOf('IMAGES')).toBe(line?.indexOf('demo/web:1'));
    expect(head?.indexOf('NODE')).toBe(line?.indexOf('(pending)'));
  });
});
