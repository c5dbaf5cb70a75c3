// A real kubelet node (`tessera dev up --real-nodes`): containerd, runc and the CNI bridge run a pod whose image
// comes from the cluster's local registry; the pod reaches the API server through the `kubernetes` Service (kube-
// proxy) with the service-account token the kubelet mounted, its logs come back through the API server, and the
// host is left as found after the cluster stops. On a machine that cannot run real nodes (not root), `dev up`
// says why instead.
import { execFile } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureBinaries, REAL_NODE_BINARIES, TEST_BINARIES } from '../../../src/devcluster/binaries.js';
import type { DevCluster } from '../../../src/devcluster/cluster.js';
import { filesImage } from '../../../src/devcluster/oci-archive.js';
import { isAlive } from '../../../src/devcluster/processes.js';
import { KUBELET_GLOBAL_SYSCTLS, sysctlPath } from '../../../src/devcluster/real-node-config.js';
import {
  describeRealNodes,
  hostArchitecture,
  realNodeSupportProblem,
} from '../../../src/devcluster/real-nodes.js';
import { eventually, startTestCluster } from '../../support/cluster.js';
import { holdRealNodeMachine } from '../../support/real-node-lock.js';
import { writeOciLayout } from '../../support/oci-layout.js';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

/** What a real node could leave behind on the host: compared before start and after stop. */
async function hostTraces(stateRoot: string): Promise<Record<string, unknown>> {
  const sysctls = Object.fromEntries(
    KUBELET_GLOBAL_SYSCTLS.filter((name) => existsSync(sysctlPath(name))).map((name) => [
      name,
      readFileSync(sysctlPath(name), 'utf8').trim(),
    ]),
  );
  const links = readdirSync('/sys/class/net').filter((name) => name.startsWith('tessera-'));
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((mountPoint) => mountPoint.startsWith(stateRoot) || mountPoint.startsWith('/run/containerd'));
  const cgroups = existsSync('/sys/fs/cgroup/memory/tessera')
    ? readdirSync('/sys/fs/cgroup/memory/tessera')
    : existsSync('/sys/fs/cgroup/tessera')
      ? readdirSync('/sys/fs/cgroup/tessera')
      : [];
  // The node's chains and addresses; other tests' containers may add rules of their own meanwhile.
  const iptables = (await run('iptables-save')).stdout
    .split('\n')
    .filter((line) => /KUBE-|CNI-|10\.8[78]\.|10\.96\./.test(line));
  const routes = (await run('ip', ['-4', 'route', 'show'])).stdout
    .split('\n')
    .filter((line) => /10\.8[78]\.|10\.96\./.test(line));
  return { sysctls, links, mounts, cgroups, iptables, routes, runContainerd: existsSync('/run/containerd') };
}

if (isRoot) {
  describe('a real node', () => {
    let cluster: DevCluster | undefined;
    const started = (): DevCluster => {
      if (!cluster) throw new Error('the cluster with a real node did not start (see beforeAll)');
      return cluster;
    };
    const realNode = (): NonNullable<DevCluster['realNodes']>['nodes'][number] => {
      const node = started().realNodes?.nodes[0];
      if (!node) throw new Error('the cluster started without its real node');
      return node;
    };
    let before: Record<string, unknown>;
    let releaseMachine: (() => void) | undefined;
    let stateRoot: string;
    let work: string;
    /** Pushed by the first pod test, run again by the DNS test. */
    let kubectlImage: string | undefined;

    beforeAll(async () => {
      // Built on first use (minutes when cold: containerd and the kubelet; cached afterwards).
      releaseMachine = await holdRealNodeMachine();
      await ensureBinaries([...TEST_BINARIES, ...REAL_NODE_BINARIES]);
      expect(realNodeSupportProblem()).toBeUndefined();
      work = mkdtempSync(path.join(os.tmpdir(), 'tessera-real-node-'));
      stateRoot = inject('stateRoot');
      before = await hostTraces(stateRoot);
      cluster = await startTestCluster({ name: 'real-node', nodes: 'none', registry: true, realNodes: 1 });
    }, 30 * 60_000);

    afterAll(async () => {
      try {
        await cluster?.stop({ wipe: true });
        if (work) rmSync(work, { recursive: true, force: true });
      } finally {
        releaseMachine?.();
      }
    });

    it("registers with its own identity, labelled with this machine's architecture", async () => {
      const core = (await started().kubeConfig()).makeApiClient(CoreV1Api);
      const node = realNode();
      const live = await core.readNode({ name: node.name });
      expect(live.metadata?.labels).toMatchObject({
        'kubernetes.io/arch': hostArchitecture(),
        'node-role.kubernetes.io/worker': '',
      });
      expect(live.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(live.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\//);
      // `tessera dev status` lists it with its processes.
      const status = describeRealNodes(
        started().realNodes ?? { nodes: [], sysctls: {}, runContainerdExisted: false },
      ).join('\n');
      expect(status).toContain(node.name);
      expect(status).toMatch(/kubelet\s+pid \d+\s+running/);
    });

    it('runs a pod from the local registry to Completed; it reaches the API server through the kubernetes Service', async () => {
      const registry = started().registry;
      if (!registry) throw new Error('the cluster started without its local registry');
      const core = (await started().kubeConfig()).makeApiClient(CoreV1Api);
      // A one-binary image: kubectl (static), which uses the pod's in-cluster configuration.
      const image = `${registry.host}/tessera-test/kubectl:1`;
      const bins = await ensureBinaries(['kubectl', 'crane']);
      const layout = path.join(work, 'kubectl-image');
      writeOciLayout(
        layout,
        filesImage({
          architecture: hostArchitecture(),
          files: [{ path: 'kubectl', bytes: readFileSync(bins.kubectl), mode: 0o755 }],
          entrypoint: ['/kubectl'],
        }),
      );
      const dockerConfig = path.join(work, 'docker');
      mkdirSync(dockerConfig, { recursive: true });
      writeFileSync(path.join(dockerConfig, 'config.json'), readFileSync(registry.dockerConfigJsonFile));
      await run(bins.crane, ['push', layout, image], {
        env: { ...process.env, DOCKER_CONFIG: dockerConfig, SSL_CERT_FILE: registry.caFile },
      });

      await core.createNamespacedSecret({
        namespace: 'default',
        body: {
          metadata: { name: 'local-registry' },
          type: 'kubernetes.io/dockerconfigjson',
          stringData: { '.dockerconfigjson': readFileSync(registry.dockerConfigJsonFile, 'utf8') },
        },
      });
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'whoami' },
          spec: {
            nodeSelector: { 'tessera.dev/real-node': 'true' },
            restartPolicy: 'Never',
            imagePullSecrets: [{ name: 'local-registry' }],
            containers: [
              {
                name: 'kubectl',
                image,
                args: ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
              },
            ],
          },
        },
      });
      const pod = await eventually(
        async () => {
          const p = await core.readNamespacedPod({ name: 'whoami', namespace: 'default' });
          if (p.status?.phase === 'Failed') {
            const logs = await core
              .readNamespacedPodLog({ name: 'whoami', namespace: 'default' })
              .catch(() => '');
            return { failed: true, pod: p, logs };
          }
          if (p.status?.phase !== 'Succeeded') throw new Error(`phase ${p.status?.phase ?? 'none'}`);
          return { failed: false, pod: p, logs: '' };
        },
        { timeoutMs: 120_000, what: 'pod whoami to complete' },
      );
      expect(pod.failed, `pod failed: ${pod.logs}`).toBe(false);
      expect(pod.pod.spec?.nodeName).toBe(realNode().name);
      // Its output, through the API server and the kubelet: the identity of the token the kubelet mounted.
      const logs = await core.readNamespacedPodLog({ name: 'whoami', namespace: 'default' });
      expect(logs).toBe('system:serviceaccount:default:default');
      kubectlImage = image;
    });

    it("resolves Service names in pods through the cluster DNS, with a pod's search path", async () => {
      if (!kubectlImage) throw new Error('the kubectl image was not pushed (see the test before)');
      const core = (await started().kubeConfig()).makeApiClient(CoreV1Api);
      // `kubernetes.default.svc` is completed by the pod's search path (ndots:5) to the cluster domain; the
      // answer is the Service's ClusterIP, which the node's kube-proxy takes to the API server. A kubeconfig names
      // the server so, with the token and CA the kubelet mounted.
      const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: {
          metadata: { name: 'kubeconfig-by-name' },
          data: {
            kubeconfig: JSON.stringify({
              apiVersion: 'v1',
              kind: 'Config',
              clusters: [
                {
                  name: 'by-name',
                  cluster: {
                    server: 'https://kubernetes.default.svc',
                    'certificate-authority': `${sa}/ca.crt`,
                  },
                },
              ],
              users: [{ name: 'pod', user: { tokenFile: `${sa}/token` } }],
              contexts: [{ name: 'by-name', context: { cluster: 'by-name', user: 'pod' } }],
              'current-context': 'by-name',
            }),
          },
        },
      });
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'whoami-by-name' },
          spec: {
            volumes: [{ name: 'config', configMap: { name: 'kubeconfig-by-name' } }],
            nodeSelector: { 'tessera.dev/real-node': 'true' },
            restartPolicy: 'Never',
            imagePullSecrets: [{ name: 'local-registry' }],
            containers: [
              {
                name: 'kubectl',
                image: kubectlImage,
                volumeMounts: [{ name: 'config', mountPath: '/config' }],
                args: [
                  '--kubeconfig=/config/kubeconfig',
                  'auth',
                  'whoami',
                  '-o',
                  'jsonpath={.status.userInfo.username}',
                ],
              },
            ],
          },
        },
      });
      const phase = await eventually(
        async () => {
          const p = await core.readNamespacedPod({ name: 'whoami-by-name', namespace: 'default' });
          if (p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
            throw new Error(`phase ${p.status?.phase ?? 'none'}`);
          return p.status.phase;
        },
        { timeoutMs: 120_000, what: 'pod whoami-by-name to finish' },
      );
      const logs = await core.readNamespacedPodLog({ name: 'whoami-by-name', namespace: 'default' });
      expect(phase, logs).toBe('Succeeded');
      expect(logs).toBe('system:serviceaccount:default:default');
      // `tessera dev status` lists the DNS with the first node's processes.
      const status = describeRealNodes(
        started().realNodes ?? { nodes: [], sysctls: {}, runContainerdExisted: false },
      ).join('\n');
      expect(status).toMatch(/cluster-dns\s+pid \d+\s+running/);
    });

    it('leaves the host as it found it once the cluster stops', async () => {
      await started().stop({ wipe: true });
      const processes = started().realNodes?.nodes.flatMap((n) => Object.values(n.processes)) ?? [];
      cluster = undefined;
      expect(processes.length).toBeGreaterThan(0);
      for (const proc of processes) expect(isAlive(proc.pid, proc.startTicks)).toBe(false);
      expect(await hostTraces(stateRoot)).toEqual(before);
    });
  });
} else {
  // This machine cannot run real nodes: `dev up --real-nodes` refuses, naming why, before starting anything.
  describe('real nodes without root', () => {
    it('are refused with the reason', async () => {
      await expect(
        startTestCluster({ name: 'real-node-refused', nodes: 'none', realNodes: 1 }),
      ).rejects.toMatchObject({
        code: 'TESSERA_DEVCLUSTER_REAL_NODES_UNSUPPORTED',
        message: expect.stringMatching(/need root/) as unknown,
      });
    });
  });
}
