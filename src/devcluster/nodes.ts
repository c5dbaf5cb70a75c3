// Fake nodes for kwok, labelled like real nodes so the scheduler and architecture-aware code treat them as such.
// kwok manages only nodes carrying the `kwok.x-k8s.io/node: fake` annotation, keeps them Ready and runs the
// pods bound to them.
import type { V1Node } from '@kubernetes/client-node';

export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const KWOK_NODE_ANNOTATION_VALUE = 'fake';

export type Architecture = 'amd64' | 'arm64' | 'ppc64le' | 's390x';
export const ARCHITECTURES: readonly Architecture[] = ['amd64', 'arm64', 'ppc64le', 's390x'];

export interface FakeNodeSpec {
  readonly name: string;
  readonly architecture: Architecture;
  readonly role: 'worker' | 'control-plane';
  /** Extra labels, e.g. a MachineConfigPool selector. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** The default topology: one control-plane node, and `workersPerArch` workers of each architecture. */
export function defaultNodeSpecs(workersPerArch = 2): FakeNodeSpec[] {
  const specs: FakeNodeSpec[] = [{ name: 'control-plane-0', architecture: 'amd64', role: 'control-plane' }];
  for (const architecture of ARCHITECTURES) {
    for (let i = 0; i < workersPerArch; i++) {
      specs.push({ name: `worker-${architecture}-${i}`, architecture, role: 'worker' });
    }
  }
  return specs;
}

export function fakeNode(spec: FakeNodeSpec, kubeletVersion: string): V1Node {
  const roleLabels: Record<string, string> =
    spec.role === 'control-plane'
      ? { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/master': '' }
      : { 'node-role.kubernetes.io/worker': '' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      annotations: {
        [KWOK_NODE_ANNOTATION]: KWOK_NODE_ANNOTATION_VALUE,
        'node.alpha.kubernetes.io/ttl': '0',
      },
      labels: {
        'kubernetes.io/arch': spec.architecture,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': spec.name,
        'beta.kubernetes.io/arch': spec.architecture,
        'beta.kubernetes.io/os': 'linux',
        type: 'kwok',
        ...roleLabels,
        ...spec.labels,
      },
    },
    spec:
      spec.role === 'control-plane'
        ? { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] }
        : {},
    status: {
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      nodeInfo: {
        architecture: spec.architecture,
        operatingSystem: 'linux',
        kubeletVersion,
        kubeProxyVersion: '',
        containerRuntimeVersion: 'kwok',
        kernelVersion: '',
        osImage: 'kwok',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    },
  };
}
