// The exec format error monitor's decisions: what the kubelet's report of a container whose binary has another
// architecture looks like (as measured on a real node), which instances are looked at and how, and what the event
// tells the user: which image lacks which architecture, what pod placement recorded, and what to do.
import { describe, expect, it } from 'vitest';
import {
  EXEC_FORMAT_ERROR_TEXT,
  MAX_CONTAINERS_EXAMINED,
  MAX_FINDING_MESSAGE_CHARS,
  MAX_SCANNED_TEXT_CHARS,
  containersToExamine,
  examinationPass,
  execFormatErrorFinding,
  projectExecWatchedPod,
  saysExecFormatError,
  type ExecWatchedPod,
  type WatchedContainerStatus,
} from './exec-format-error.js';

const CID = (n: number): string => `containerd://${String(n).padStart(64, 'a')}`;

/** The status the kubelet wrote for an arm64 binary on an amd64 node (runc 1.1.5, terminationMessagePolicy File). */
const crashLooping: WatchedContainerStatus = {
  name: 'hello',
  restartCount: 2,
  state: {},
  lastState: {
    terminated: {
      containerID: CID(1),
      exitCode: 1,
      reason: 'Error',
      startedAt: '2026-12-04T21:30:34Z',
      finishedAt: '2026-12-04T21:30:34Z',
    },
  },
};

function pod(over: Partial<ExecWatchedPod> & { statuses?: WatchedContainerStatus[] } = {}): ExecWatchedPod {
  const { statuses, ...rest } = over;
  return {
    metadata: { name: 'hello', namespace: 'shop', uid: 'u1' },
    spec: { nodeName: 'real-amd64-0', containers: [{ name: 'hello', image: 'registry.example/hello:1' }] },
    status: { phase: 'Running', containerStatuses: statuses ?? [crashLooping] },
    ...rest,
  };
}

describe('what the kubelet reports', () => {
  it('is recognised in any case, in the text a runtime writes', () => {
    expect(saysExecFormatError('exec /hello: exec format error\n')).toBe(true);
    expect(
      saysExecFormatError('standard_init_linux.go:228: exec user process caused: Exec Format Error'),
    ).toBe(true);
    expect(saysExecFormatError('/bin/sh: /opt/tool: cannot execute binary file: Exec format error')).toBe(
      true,
    );
    expect(saysExecFormatError('panic: nil map')).toBe(false);
    expect(saysExecFormatError(undefined)).toBe(false);
  });

  it('is searched for only in the first MAX_SCANNED_TEXT_CHARS of a tenant-written text', () => {
    const padded = 'x'.repeat(MAX_SCANNED_TEXT_CHARS) + EXEC_FORMAT_ERROR_TEXT;
    expect(saysExecFormatError(padded)).toBe(false);
    expect(saysExecFormatError(padded.slice(EXEC_FORMAT_ERROR_TEXT.length))).toBe(true);
  });
});

describe("the monitor's pod cache", () => {
  it('keeps failed instances only, with their message reduced to the verdict', () => {
    const projected = projectExecWatchedPod({
      metadata: {
        name: 'p',
        namespace: 'n',
        uid: 'u',
        labels: {
          app: 'x',
          'multiarch.openshift.io/amd64': '',
          'multiarch.openshift.io/node-affinity': 'set',
        },
        annotations: { big: 'y'.repeat(100_000) },
      },
      spec: {
        nodeName: 'node-1',
        containers: [
          { name: 'ok', image: 'a', env: [{ name: 'SECRET', value: 'z' }] } as never,
          { name: 'bad', image: 'b' },
        ],
      },
      status: {
        containerStatuses: [
          { name: 'ok', restartCount: 0, state: { running: {} } } as never,
          {
            name: 'bad',
            restartCount: 3,
            lastState: {
              terminated: {
                exitCode: 1,
                containerID: CID(2),
                message: `${'m'.repeat(3000)} exec format error`,
              },
            },
          },
          { name: 'done', state: { terminated: { exitCode: 0, message: 'exec format error' } } },
        ],
      },
    });
    expect(projected).toEqual({
      metadata: {
        name: 'p',
        namespace: 'n',
        uid: 'u',
        labels: { 'multiarch.openshift.io/amd64': '', 'multiarch.openshift.io/node-affinity': 'set' },
      },
      spec: {
        nodeName: 'node-1',
        containers: [
          { name: 'ok', image: 'a' },
          { name: 'bad', image: 'b' },
        ],
      },
      status: {
        containerStatuses: [
          {
            name: 'bad',
            restartCount: 3,
            lastState: { terminated: { exitCode: 1, containerID: CID(2), message: EXEC_FORMAT_ERROR_TEXT } },
          },
        ],
      },
    });
  });

  it('keeps only the identity of a pod without failed instances', () => {
    const running = pod({ statuses: [{ name: 'hello', restartCount: 0 }] });
    expect(projectExecWatchedPod(running)).toEqual({
      metadata: { name: 'hello', namespace: 'shop', uid: 'u1' },
    });
  });

  it('keeps at most MAX_CONTAINERS_EXAMINED container statuses of a pod', () => {
    const many = Array.from({ length: 5000 }, (_, i) => ({ ...crashLooping, name: `c${i}` }));
    const projected = projectExecWatchedPod(pod({ statuses: many }));
    expect(projected.status?.containerStatuses).toHaveLength(MAX_CONTAINERS_EXAMINED);
  });
});

describe('which instances are examined, and how', () => {
  it('reads the log of an instance that failed within a second, as runc 1.1 reports it (previous: it restarted)', () => {
    expect(containersToExamine(pod())).toEqual({
      examine: [
        { container: 'hello', init: false, instance: `hello/${CID(1)}`, evidence: 'log', previous: true },
      ],
      skip: [],
    });
  });

  it('takes the termination message when it says so (FallbackToLogsOnError, StartError)', () => {
    const statuses = [
      {
        name: 'hello',
        state: {
          terminated: {
            exitCode: 128,
            reason: 'StartError',
            containerID: CID(3),
            message: EXEC_FORMAT_ERROR_TEXT,
          },
        },
      },
    ];
    expect(containersToExamine(pod({ statuses })).examine).toEqual([
      { container: 'hello', init: false, instance: `hello/${CID(3)}`, evidence: 'status', previous: false },
    ]);
  });

  it('skips an instance that ran for longer (not an exec failure) and ignores what did not fail', () => {
    const longLived = {
      name: 'app',
      restartCount: 4,
      lastState: {
        terminated: {
          exitCode: 2,
          containerID: CID(4),
          startedAt: '2026-12-04T21:30:00Z',
          finishedAt: '2026-12-04T21:30:30Z',
        },
      },
    };
    expect(containersToExamine(pod({ statuses: [longLived] }))).toEqual({
      examine: [],
      skip: [`app/${CID(4)}`],
    });
    expect(containersToExamine(pod({ statuses: [] }))).toEqual({ examine: [], skip: [] });
  });

  it('names an init container apart, and an instance without a container ID by its restart', () => {
    const init = { ...crashLooping, lastState: { terminated: { ...crashLooping.lastState?.terminated } } };
    delete (init.lastState.terminated as { containerID?: string }).containerID;
    const p = pod({ statuses: [] });
    const examined = containersToExamine({ ...p, status: { initContainerStatuses: [init] } }).examine;
    expect(examined).toEqual([
      expect.objectContaining({ init: true, instance: 'init:hello/restart-2@2026-12-04T21:30:34Z' }),
    ]);
  });
});

describe('once per failed instance', () => {
  it('a resync examines nothing again; a restart examines its new instance; what is remembered follows the status', () => {
    const first = examinationPass(pod(), new Set());
    expect(first.examine.map((c) => c.instance)).toEqual([`hello/${CID(1)}`]);
    // The same pod again (a resync, a label change): nothing to examine.
    expect(examinationPass(pod(), first.remember)).toEqual({ examine: [], remember: first.remember });
    // Restarted and failed again: the new instance only, and the old one is forgotten.
    const restarted: WatchedContainerStatus = {
      ...crashLooping,
      restartCount: 3,
      lastState: { terminated: { ...crashLooping.lastState?.terminated, containerID: CID(9) } },
    };
    const second = examinationPass(pod({ statuses: [restarted] }), first.remember);
    expect(second.examine.map((c) => c.instance)).toEqual([`hello/${CID(9)}`]);
    expect([...second.remember]).toEqual([`hello/${CID(9)}`]);
  });

  it('remembers at most one instance per container, whatever the tenant does', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ ...crashLooping, name: `c${i}` }));
    const { remember } = examinationPass(pod({ statuses: many }), new Set());
    expect(remember.size).toBe(MAX_CONTAINERS_EXAMINED);
  });
});

describe('the finding', () => {
  const finding = (p: ExecWatchedPod, nodeArchitecture: string | null = 'amd64') =>
    execFormatErrorFinding({
      pod: p,
      container: 'hello',
      init: false,
      nodeArchitecture: nodeArchitecture ?? undefined,
      evidence: 'log',
    });

  it('a pod the webhook did not gate (spec.nodeName): which image lacks which architecture, and what to do', () => {
    const admitted = pod({
      metadata: {
        name: 'hello',
        namespace: 'shop',
        labels: {
          'multiarch.openshift.io/scheduling-gate': 'not-set',
          'multiarch.openshift.io/node-affinity': 'not-set',
        },
      },
    });
    const f = finding(admitted);
    expect(f).toMatchObject({
      container: 'hello',
      image: 'registry.example/hello:1',
      nodeArchitecture: 'amd64',
    });
    expect(f.message).toBe(
      'Container "hello" failed with "exec format error" (the last lines of its log) on node real-amd64-0 ' +
        "(amd64): image registry.example/hello:1 runs a binary that is not built for amd64. Pod placement's " +
        'webhook admitted the pod without gating it, so it set no architecture: spec.nodeName was set at ' +
        "creation (which bypasses the scheduler and pod placement), or the pod is a DaemonSet's, selects " +
        'control-plane nodes, or is in a namespace pod placement leaves alone (`tessera podplacement explain` ' +
        'says which). Give the pod a kubernetes.io/arch node affinity for an architecture image ' +
        'registry.example/hello:1 supports, or create it so that pod placement places it.',
    );
  });

  it('a pod pod placement never saw, and one whose images could not be inspected', () => {
    expect(finding(pod()).message).toContain(
      "Pod placement never saw the pod: its namespace is not selected by the ClusterPodPlacementConfig's " +
        'namespaceSelector',
    );
    const uninspected = pod({
      metadata: {
        name: 'hello',
        namespace: 'shop',
        labels: {
          'multiarch.openshift.io/scheduling-gate': 'removed',
          'multiarch.openshift.io/node-affinity': 'not-set',
        },
      },
    });
    expect(finding(uninspected).message).toContain("its images' architectures could not be determined");
  });

  it('placed for other architectures, yet on this node: the affinity was changed or bypassed', () => {
    const placed = pod({
      metadata: {
        name: 'hello',
        namespace: 'shop',
        labels: { 'multiarch.openshift.io/node-affinity': 'set', 'multiarch.openshift.io/arm64': '' },
      },
    });
    expect(finding(placed).message).toContain(
      'Pod placement required kubernetes.io/arch in (arm64) for this pod (what its images support), yet it runs ' +
        'on amd64',
    );
  });

  it('placed because the manifests declare the architecture: the image variant is built wrong', () => {
    const placed = pod({
      metadata: {
        name: 'hello',
        namespace: 'shop',
        labels: {
          'multiarch.openshift.io/node-affinity': 'set',
          'multiarch.openshift.io/amd64': '',
          'multiarch.openshift.io/arm64': '',
        },
      },
    });
    expect(finding(placed).message).toContain(
      "Pod placement found amd64 in the manifests of the pod's images (together they support amd64, arm64), so " +
        'image registry.example/hello:1 declares amd64 but carries a binary of another architecture',
    );
  });

  it('placed on the fallback architecture, and pinned by the pod itself', () => {
    const fallback = pod({
      metadata: {
        name: 'hello',
        namespace: 'shop',
        labels: {
          'multiarch.openshift.io/node-affinity': 'set',
          'multiarch.openshift.io/fallback-arch': 'amd64',
        },
      },
    });
    expect(finding(fallback).message).toContain(
      'fallbackArchitecture (amd64), which image registry.example/hello:1 lacks',
    );
    const pinned = pod({ spec: { ...pod().spec, nodeSelector: { 'kubernetes.io/arch': 'amd64' } } });
    expect(finding(pinned).message).toContain('The pod requires kubernetes.io/arch in (amd64) itself');
  });

  it("says the node's architecture is unknown when the Node is gone", () => {
    expect(finding(pod(), null).message).toContain("not built for the node's architecture.");
  });

  it('hostile names and images are quoted and capped; the message stays within MAX_FINDING_MESSAGE_CHARS', () => {
    const evil = 'a"\n'.repeat(10_000);
    const hostile = pod({
      spec: { nodeName: 'n'.repeat(10_000), containers: [{ name: evil, image: 'i'.repeat(100_000) }] },
    });
    const f = execFormatErrorFinding({
      pod: hostile,
      container: evil,
      init: false,
      nodeArchitecture: 'z'.repeat(10_000),
      evidence: 'status',
    });
    expect(f.message.length).toBeLessThanOrEqual(MAX_FINDING_MESSAGE_CHARS);
    expect(f.message.startsWith('Container "a\\"\\n')).toBe(true);
    expect(f.message).not.toContain('\n');
  });
});
