// The exec format error monitor on a real kubelet node (`tessera dev up --real-nodes`): a static binary built for
// another architecture (one this machine's binfmt_misc has no emulator for, so it cannot run) is pushed to the
// cluster's local registry and run by containerd and runc on the real node. The pod placement operator, with
// `execFormatErrorMonitor.enabled`, reads what the kubelet reports and emits MTO's Warning event `ExecFormatError`
// on the pod saying which image lacks which architecture and what pod placement recorded, labels the pod
// `multiarch.openshift.io/exec-format-error=true`, and counts `mto_enoexecevents_total` on its /metrics (the input
// of the ExecFormatErrorsDetected alert) once per failed container instance. Two pods:
//  1. forced onto the node with spec.nodeName (pod placement does not gate it): the image declares its real
//     architecture, which the node lacks;
//  2. placed by pod placement itself: the image's manifest declares the node's architecture but carries the foreign
//     binary, so placement (rightly, by the manifest) sends it to the node, and the finding says the image lies.
// A real node needs root; on a machine without it, `dev up --real-nodes` refuses, naming why.
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdRealNodeMachine } from '../../support/real-node-lock.js';
import {
  ensureBinaries,
  projectRoot,
  REAL_NODE_BINARIES,
  TEST_BINARIES,
} from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { filesImage } from '../../../src/devcluster/oci-archive.js';
import { hostArchitecture } from '../../../src/devcluster/real-nodes.js';
import { LABELS, SCHEDULING_GATE, SUPPORTED_ARCHITECTURES } from '../../../src/podplacement/constants.js';
import {
  EXEC_FORMAT_ERROR_EVENT_REASON,
  EXEC_FORMAT_ERROR_LABEL,
  EXEC_FORMAT_ERRORS_ALERT,
  EXEC_FORMAT_ERRORS_METRIC,
} from '../../../src/podplacement/exec-format-error.js';
import {
  startPodPlacementOperator,
  type PodPlacementOperatorHandle,
} from '../../../src/podplacement/operator/start.js';
import { KubeClient } from '../../../src/runtime/index.js';
import { eventually, startTestCluster } from '../../support/cluster.js';
import { writeOciLayout } from '../../support/oci-layout.js';
import { inProcessOperatorOptions } from './in-process-operator.js';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
const OPERATOR_NS = 'tessera-efe-operator';
const NS = 'efe-tenant';
const HELLO_GO = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n';

interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status?: {
    containerStatuses?: {
      name: string;
      restartCount: number;
      lastState?: { terminated?: { exitCode: number } };
    }[];
  };
}
interface CoreEvent {
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  source?: { component?: string };
  involvedObject: { name?: string; kind?: string };
}

/** ELF magic matchers of the enabled binfmt_misc handlers (none when binfmt_misc is not mounted). */
function binfmtHandlers(): { name: string; offset: number; magic: Buffer; mask: Buffer | undefined }[] {
  const dir = '/proc/sys/fs/binfmt_misc';
  if (!existsSync(path.join(dir, 'status'))) return [];
  if (readFileSync(path.join(dir, 'status'), 'utf8').trim() !== 'enabled') return [];
  return readdirSync(dir)
    .filter((name) => name !== 'status' && name !== 'register')
    .flatMap((name) => {
      const lines = readFileSync(path.join(dir, name), 'utf8').split('\n');
      const field = (key: string) =>
        lines
          .find((l) => l.startsWith(`${key} `))
          ?.slice(key.length + 1)
          .trim();
      const magic = field('magic');
      if (lines[0]?.trim() !== 'enabled' || magic === undefined) return [];
      const mask = field('mask');
      return [
        {
          name,
          offset: Number(field('offset') ?? '0'),
          magic: Buffer.from(magic, 'hex'),
          mask: mask === undefined ? undefined : Buffer.from(mask, 'hex'),
        },
      ];
    });
}

/** The binfmt_misc handler that would run `binary` (as the kernel matches it), if any. */
function emulatorFor(binary: Buffer): string | undefined {
  return binfmtHandlers().find((h) =>
    h.magic.every((byte, i) => {
      const m = h.mask?.[i] ?? 0xff;
      return ((binary[h.offset + i] ?? -1) & m) === (byte & m);
    }),
  )?.name;
}

/**
 * A static hello binary for the first architecture other than this machine's that no binfmt_misc handler (qemu)
 * would run; fails naming the handlers when every candidate has one.
 */
async function foreignBinary(work: string): Promise<{ architecture: string; bytes: Buffer }> {
  const src = path.join(work, 'hello-src');
  mkdirSync(src, { recursive: true });
  writeFileSync(path.join(src, 'go.mod'), 'module hello\n\ngo 1.22\n');
  writeFileSync(path.join(src, 'main.go'), HELLO_GO);
  const emulated: string[] = [];
  for (const architecture of SUPPORTED_ARCHITECTURES.filter((a) => a !== hostArchitecture())) {
    const out = path.join(work, `hello-${architecture}`);
    await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', out, '.'], {
      cwd: src,
      env: { ...process.env, GOOS: 'linux', GOARCH: architecture, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
    const bytes = readFileSync(out);
    const emulator = emulatorFor(bytes);
    if (emulator === undefined) return { architecture, bytes };
    emulated.push(`${architecture} (binfmt_misc handler ${emulator})`);
  }
  throw new Error(
    `every architecture other than ${hostArchitecture()} runs here through an emulator: ${emulated.join(', ')}; ` +
      'an exec format error cannot happen on this machine. Disable a handler (echo 0 > ' +
      '/proc/sys/fs/binfmt_misc/<name>) to run this test.',
  );
}

/** The value of an unlabelled counter in a Prometheus text exposition (0 when absent). */
function counterValue(exposition: string, name: string): number {
  const line = exposition.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

if (isRoot) {
  describe('the exec format error monitor on a real node', () => {
    let cluster: DevCluster | undefined;
    let releaseMachine: (() => void) | undefined;
    let client: KubeClient | undefined;
    let operator: PodPlacementOperatorHandle | undefined;
    const stop = new AbortController();
    let work = '';
    let foreign: { architecture: string; bytes: Buffer };
    let honestImage = '';
    let lyingImage = '';
    const started = () => {
      if (!cluster || !client || !operator)
        throw new Error('the cluster or the operator did not start (beforeAll)');
      return { cluster, client, operator };
    };
    const req = <T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', p: string, body?: unknown) => {
      if (!client) throw new Error('the cluster did not start (beforeAll)');
      return client.request<T>({ method, path: p, body });
    };
    const metrics = async (): Promise<string> => {
      const res = await fetch(`http://127.0.0.1:${started().operator.probePort()}/metrics`);
      return res.text();
    };
    const eventsOf = async (pod: string): Promise<CoreEvent[]> =>
      (
        await req<{ items: CoreEvent[] }>(
          'GET',
          `/api/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${pod}`)}`,
        )
      ).items;
    /** The monitor's event on `pod`, once it is there. */
    const finding = (pod: string) =>
      eventually(
        async () => {
          const e = (await eventsOf(pod)).find((x) => x.reason === EXEC_FORMAT_ERROR_EVENT_REASON);
          if (!e) throw new Error(`no ${EXEC_FORMAT_ERROR_EVENT_REASON} event on ${pod} yet`);
          return e;
        },
        { timeoutMs: 120_000, what: `the ${EXEC_FORMAT_ERROR_EVENT_REASON} event on ${pod}` },
      );

    /**
     * Creates a pod once pod placement's webhook reviews pods (it labels every pod it reviews; a pod created
     * before the API server calls it is deleted and made again); returns it as created.
     */
    const createReviewed = (prefix: string, spec: Record<string, unknown>) =>
      eventually(
        async () => {
          const pod = await req<Pod & { spec: { schedulingGates?: unknown[] } }>(
            'POST',
            `/api/v1/namespaces/${NS}/pods`,
            { metadata: { generateName: `${prefix}-` }, spec },
          );
          if (pod.metadata.labels?.[LABELS.schedulingGate] !== undefined) return pod;
          await req('DELETE', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}?gracePeriodSeconds=0`);
          throw new Error('not reviewed: the webhook is not live yet');
        },
        { timeoutMs: 60_000, what: 'a pod reviewed by the pod placement webhook' },
      );

    beforeAll(async () => {
      // Built on first use (minutes when cold: containerd and the kubelet; cached afterwards).
      releaseMachine = await holdRealNodeMachine();
      await ensureBinaries([...TEST_BINARIES, ...REAL_NODE_BINARIES]);
      work = mkdtempSync(path.join(os.tmpdir(), 'tessera-exec-format-'));
      foreign = await foreignBinary(work);
      cluster = await startTestCluster({ name: 'exec-format', nodes: 'none', registry: true, realNodes: 1 });
      const registry = cluster.registry;
      if (!registry) throw new Error('the cluster started without its local registry');
      const kubeConfig = await cluster.kubeConfig();
      client = new KubeClient(kubeConfig);

      // Two images of the same foreign binary: one declares its architecture, one declares this node's.
      const crane = (await ensureBinaries(['crane'])).crane;
      const dockerConfig = path.join(work, 'docker');
      mkdirSync(dockerConfig, { recursive: true });
      writeFileSync(path.join(dockerConfig, 'config.json'), readFileSync(registry.dockerConfigJsonFile));
      const push = async (tag: string, architecture: string): Promise<string> => {
        const layout = path.join(work, `layout-${tag}`);
        const files = [{ path: 'hello', bytes: foreign.bytes, mode: 0o755 }];
        writeOciLayout(layout, filesImage({ architecture, files, entrypoint: ['/hello'] }));
        const image = `${registry.host}/tessera-test/hello:${tag}`;
        await run(crane, ['push', layout, image], {
          env: { ...process.env, DOCKER_CONFIG: dockerConfig, SSL_CERT_FILE: registry.caFile },
        });
        return image;
      };
      honestImage = await push(foreign.architecture, foreign.architecture);
      lyingImage = await push(`says-${hostArchitecture()}`, hostArchitecture());

      for (const name of [OPERATOR_NS, NS]) await req('POST', '/api/v1/namespaces', { metadata: { name } });
      await eventually(() => req('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`), {
        what: `the default service account of ${NS}`,
      });
      await req('POST', `/api/v1/namespaces/${NS}/secrets`, {
        metadata: { name: 'local-registry' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': readFileSync(registry.dockerConfigJsonFile, 'utf8') },
      });
      operator = await startPodPlacementOperator({
        ...inProcessOperatorOptions({
          kubeConfig,
          namespace: OPERATOR_NS,
          signal: stop.signal,
          certDir: path.join(work, 'certs'),
        }),
        // /metrics is scraped as Prometheus would.
        probes: { host: '127.0.0.1', port: 0 },
        registry: { caCertificates: [readFileSync(registry.caFile, 'utf8')] },
      });
      await eventually(
        () =>
          req('POST', '/apis/multiarch.openshift.io/v1beta1/clusterpodplacementconfigs', {
            apiVersion: 'multiarch.openshift.io/v1beta1',
            kind: 'ClusterPodPlacementConfig',
            metadata: { name: 'cluster' },
            spec: { plugins: { execFormatErrorMonitor: { enabled: true } } },
          }),
        { timeoutMs: 60_000, intervalMs: 500, what: 'the ClusterPodPlacementConfig created (CRDs served)' },
      );
    }, 30 * 60_000);

    afterAll(async () => {
      try {
        stop.abort();
        await operator?.stopped.catch(() => undefined);
        await client?.close();
        await cluster?.stop({ wipe: true });
        if (work) rmSync(work, { recursive: true, force: true });
      } finally {
        releaseMachine?.();
      }
    });

    it('the alert ExecFormatErrorsDetected reads the counter the operator serves, and the counter starts at 0', async () => {
      const rules = parseAllDocuments(
        readFileSync(path.join(projectRoot, 'deploy/podplacement/base/prometheusrule.yaml'), 'utf8'),
      ).map((d) => d.toJSON() as { spec: { groups: { rules: { alert: string; expr: string }[] }[] } });
      const alert = rules
        .flatMap((r) => r.spec.groups.flatMap((g) => g.rules))
        .find((r) => r.alert === EXEC_FORMAT_ERRORS_ALERT);
      expect(alert?.expr).toContain(`${EXEC_FORMAT_ERRORS_METRIC}{job="pod-placement-metrics"}`);
      const exposition = await metrics();
      expect(exposition).toContain(`# TYPE ${EXEC_FORMAT_ERRORS_METRIC} counter`);
      expect(exposition.split('\n')).toContain(`${EXEC_FORMAT_ERRORS_METRIC} 0`);
    });

    it('a pod forced onto the node (spec.nodeName): event, label and counter, once per failed instance', async () => {
      const node = started().cluster.realNodes?.nodes[0]?.name ?? '';
      const before = counterValue(await metrics(), EXEC_FORMAT_ERRORS_METRIC);
      const created = await createReviewed('pinned', {
        nodeName: node,
        imagePullSecrets: [{ name: 'local-registry' }],
        containers: [{ name: 'hello', image: honestImage }],
      });
      const pinned = created.metadata.name;
      // Reviewed, not gated: spec.nodeName bypasses the scheduler, and pod placement with it.
      expect(created.metadata.labels?.[LABELS.schedulingGate]).toBe('not-set');
      const event = await finding(pinned);
      expect(event).toMatchObject({ type: 'Warning', source: { component: 'multiarch-tuning-operator' } });
      expect(event.message).toContain(
        `Container "hello" failed with "exec format error" (the last lines of its log) on node ${node} ` +
          `(${hostArchitecture()}): image ${honestImage} runs a binary that is not built for ${hostArchitecture()}.`,
      );
      expect(event.message).toContain("Pod placement's webhook admitted the pod without gating it");
      const labelled = await eventually(
        async () => {
          const pod = await req<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${pinned}`);
          if (pod.metadata.labels?.[EXEC_FORMAT_ERROR_LABEL] !== 'true') throw new Error('not labelled yet');
          return pod;
        },
        { what: `the ${EXEC_FORMAT_ERROR_LABEL} label` },
      );
      expect(labelled.spec.nodeName).toBe(node);

      // Each restart is a new failed instance, reported once: the counter rises with the restarts.
      const restartsOf = async () =>
        (await req<Pod>('GET', `/api/v1/namespaces/${NS}/pods/${pinned}`)).status?.containerStatuses?.[0]
          ?.restartCount ?? 0;
      await eventually(
        async () => {
          const counted = counterValue(await metrics(), EXEC_FORMAT_ERRORS_METRIC) - before;
          if (counted < 2) throw new Error(`${counted} counted, ${await restartsOf()} restarts`);
        },
        { timeoutMs: 120_000, what: 'a second failed instance counted' },
      );
      // Its own Event, whose count the repeats raise (as the kubelet's BackOff events), never exceeds the failed
      // instances: one per restart, plus the current one. Read before the restarts (both only grow).
      const reported = await eventually(
        async () => {
          const events = (await eventsOf(pinned)).filter((e) => e.reason === EXEC_FORMAT_ERROR_EVENT_REASON);
          const count = events.reduce((sum, e) => sum + (e.count ?? 1), 0);
          if (count < 2) throw new Error(`event count ${count}`);
          return count;
        },
        { what: 'the repeated finding folded into its Event' },
      );
      expect(reported).toBeLessThanOrEqual((await restartsOf()) + 1);
    });

    it('a pod that pod placement sent there because its image declares the node architecture: the image is at fault', async () => {
      const node = started().cluster.realNodes?.nodes[0]?.name ?? '';
      const created = await createReviewed('placed', {
        nodeSelector: { 'tessera.dev/real-node': 'true' },
        imagePullSecrets: [{ name: 'local-registry' }],
        containers: [{ name: 'hello', image: lyingImage }],
      });
      expect(created.spec.schedulingGates).toEqual([{ name: SCHEDULING_GATE }]);
      const placed = await eventually(
        async () => {
          const pods = await req<{ items: Pod[] }>('GET', `/api/v1/namespaces/${NS}/pods`);
          const p = pods.items.find((x) => x.metadata.name === created.metadata.name);
          if (!p?.spec.nodeName) throw new Error('not scheduled yet');
          return p;
        },
        { timeoutMs: 60_000, what: 'the placed pod scheduled' },
      );
      expect(placed.spec.nodeName).toBe(node);
      const event = await finding(placed.metadata.name);
      expect(event.message).toContain(
        `image ${lyingImage} runs a binary that is not built for ${hostArchitecture()}`,
      );
      expect(event.message).toContain(
        `Pod placement found ${hostArchitecture()} in the manifests of the pod's images (together they support ` +
          `${hostArchitecture()}), so image ${lyingImage} declares ${hostArchitecture()} but carries a binary of ` +
          'another architecture',
      );
    });
  });
} else {
  describe('the exec format error monitor on a real node, without root', () => {
    it('cannot run: a real node is refused with the reason', async () => {
      await expect(
        startTestCluster({ name: 'exec-format-refused', nodes: 'none', realNodes: 1 }),
      ).rejects.toMatchObject({
        code: 'TESSERA_DEVCLUSTER_REAL_NODES_UNSUPPORTED',
        message: expect.stringMatching(/need root/) as unknown,
      });
    });
  });
}
