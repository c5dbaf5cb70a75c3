// Helpers for the pod placement end-to-end tests: the operator as a separate process (the real API server calls
// its webhook over HTTPS), a local registry with known single- and multi-architecture images, and waits.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { startLocalRegistry, type LocalRegistry } from '../../../src/devcluster/registry.js';
import { multiPlatformImage, singleImage } from '../../../src/devcluster/registry-images.js';
import { parseAllDocuments } from 'yaml';
import {
  CustomResourceDefinitions,
  ResourceClient,
  type KubeClient,
  type KubeObject,
} from '../../../src/runtime/index.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface OperatorProcess {
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  log(): string;
  /** The probe server's URL (`/metrics`, `/readyz`), from the "manager starting" log line; undefined before it. */
  probeUrl(): string | undefined;
}

export interface OperatorProcessOptions {
  namespace: string;
  globalPullSecretNamespace: string;
  registryCaFiles: readonly string[];
  retryBaseDelayMs?: number;
  /** Fixed webhook port, so a restarted operator is reachable at the registered URL. */
  webhookPort: number;
  /** Default: the shared test cluster's. */
  kubeconfigPath?: string;
  extraArgs?: readonly string[];
  /** Which half runs (`--components`). Default: both in one process. */
  components?: 'all' | 'controller' | 'webhook';
  /** Leader election on, as deployed. Default: off, so a restarted process takes over at once. */
  leaderElect?: boolean;
  /** Node flags, e.g. a Deployment's heap limits. Default: none. */
  nodeOptions?: readonly string[];
}

/** A currently free loopback port (the one helper, re-exported for these tests). */
export { freePort } from '../../../src/devcluster/processes.js';

/** Runs the `tessera` CLI (from source) as a user would, against the cluster of `kubeconfigPath` ($KUBECONFIG). */
export function runTessera(
  kubeconfigPath: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(projectRoot, 'src/cli/main.ts'), ...args],
      {
        cwd: projectRoot,
        encoding: 'utf8',
        timeout: 90_000,
        env: { ...process.env, KUBECONFIG: kubeconfigPath },
      },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
    );
  });
}

/** Starts `tessera podplacement operator` against the test cluster, reachable by URL on a free port. */
export function startOperatorProcess(o: OperatorProcessOptions): OperatorProcess {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pp-operator-'));
  const logFile = path.join(dir, 'operator.log');
  const fd = openSync(logFile, 'a');
  const args = [
    ...(o.nodeOptions ?? []),
    '--import',
    'tsx',
    'src/cli/main.ts',
    'podplacement',
    'operator',
    `--components=${o.components ?? 'all'}`,
    '--kubeconfig',
    o.kubeconfigPath ?? inject('kubeconfigPath'),
    '--namespace',
    o.namespace,
    '--webhook-host',
    '127.0.0.1',
    '--webhook-port',
    String(o.webhookPort),
    '--webhook-url',
    `https://127.0.0.1:${o.webhookPort}`,
    '--probe-port',
    '0',
    ...(o.leaderElect ? [] : ['--no-leader-elect']),
    '--install-crds',
    '--cert-dir',
    path.join(dir, 'certs'),
    '--global-pull-secret-namespace',
    o.globalPullSecretNamespace,
    '--retry-base-delay-ms',
    String(o.retryBaseDelayMs ?? 200),
    '--workers',
    '16',
    ...(o.registryCaFiles.length > 0 ? ['--registry-ca', ...o.registryCaFiles] : []),
    ...(o.extraArgs ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: projectRoot,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, TESSERA_LOG_LEVEL: 'info' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    logFile,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
    log: () => readFileSync(logFile, 'utf8'),
    probeUrl: () => {
      for (const line of readFileSync(logFile, 'utf8').split('\n')) {
        if (!line.includes('"manager starting"')) continue;
        const record = JSON.parse(line) as { probePort?: number };
        if (record.probePort) return `http://127.0.0.1:${record.probePort}`;
      }
      return undefined;
    },
  };
}

/** Architectures of the test images, by short name (as in the shared behaviour cases). */
export const IMAGE_ARCHS = {
  A: ['amd64'],
  R: ['arm64'],
  M: ['amd64', 'arm64'],
  M4: ['amd64', 'arm64', 'ppc64le', 's390x'],
  P: ['ppc64le'],
  B: ['amd64', 'arm64', 'ppc64le', 's390x'],
  PRIV: ['arm64', 'ppc64le'],
  /** Only in the mirror registry, referenced by digest through the public one (an IDMS maps it). */
  MIRRORED: ['ppc64le', 's390x'],
} as const;

export interface TestRegistries {
  readonly pub: LocalRegistry;
  readonly priv: LocalRegistry;
  /** Holds `mirrored/app` only; no other registry has it. */
  readonly mirror: LocalRegistry;
  /**
   * Image references by short name. MIRRORED names the public registry (which lacks it) by digest; BLOCKED is in
   * the public registry under `blocked/`.
   */
  readonly images: Record<keyof typeof IMAGE_ARCHS | 'ATTEST' | 'CACHE' | 'BLOCKED', string>;
  stop(): Promise<void>;
}

/** A public registry (no auth), a private one (htpasswd) and a mirror (no auth), with the test images pushed. */
export async function startTestRegistries(): Promise<TestRegistries> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'pp-registry-'));
  const pub = await startLocalRegistry({ stateDir: path.join(root, 'pub'), auth: 'none' });
  const priv = await startLocalRegistry({ stateDir: path.join(root, 'priv'), auth: 'htpasswd' });
  const mirror = await startLocalRegistry({ stateDir: path.join(root, 'mirror'), auth: 'none' });
  const p = (arch: string) => ({ architecture: arch });
  await pub.pushImage('hello', '1.2.0', multiPlatformImage({ platforms: IMAGE_ARCHS.M4.map(p) }));
  await pub.pushImage(
    'hello',
    'multiarch',
    multiPlatformImage({ platforms: IMAGE_ARCHS.M.map(p), format: 'docker' }),
  );
  await pub.pushImage('amd64-only', '1', singleImage({ platform: p('amd64') }));
  await pub.pushImage('arm64-only', '1', singleImage({ platform: p('arm64') }));
  await pub.pushImage('ppc64le-only', '1', singleImage({ platform: p('ppc64le'), format: 'docker' }));
  await pub.pushImage(
    'bundle',
    '1',
    singleImage({
      platform: p('amd64'),
      labels: { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1' },
    }),
  );
  await pub.pushImage('attest', '1', multiPlatformImage({ platforms: [p('amd64')], attestations: 1 }));
  await pub.pushImage('cache-test', '1', multiPlatformImage({ platforms: [p('arm64'), p('amd64')] }));
  await pub.pushImage('blocked/app', '1', multiPlatformImage({ platforms: IMAGE_ARCHS.M.map(p) }));
  const mirroredDigest = await mirror.pushImage(
    'mirrored/app',
    '1',
    multiPlatformImage({ platforms: IMAGE_ARCHS.MIRRORED.map(p) }),
  );
  await priv.pushImage(
    'rhel8/httpd-24',
    'latest',
    multiPlatformImage({ platforms: IMAGE_ARCHS.PRIV.map(p) }),
  );
  return {
    pub,
    priv,
    mirror,
    images: {
      A: `${pub.host}/amd64-only:1`,
      R: `${pub.host}/arm64-only:1`,
      M: `${pub.host}/hello:multiarch`,
      M4: `${pub.host}/hello:1.2.0`,
      P: `${pub.host}/ppc64le-only:1`,
      B: `${pub.host}/bundle:1`,
      PRIV: `${priv.host}/rhel8/httpd-24:latest`,
      ATTEST: `${pub.host}/attest:1`,
      CACHE: `${pub.host}/cache-test:1`,
      MIRRORED: `${pub.host}/mirrored/app@${mirroredDigest}`,
      BLOCKED: `${pub.host}/blocked/app:1`,
    },
    async stop() {
      await Promise.all([pub.stop(), priv.stop(), mirror.stop()]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A dockerconfigjson Secret body. */
export function pullSecret(
  name: string,
  namespace: string,
  dockerConfigJson: string,
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(dockerConfigJson).toString('base64') },
  };
}

/** Lists pods of a namespace with the raw client. */
export async function listPods(
  client: KubeClient,
  namespace: string,
  labelSelector?: string,
): Promise<TestPod[]> {
  const list = await client.request<{ items: TestPod[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${namespace}/pods`,
    query: { labelSelector },
  });
  return list.items;
}

export interface TestPod {
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string }[];
  };
  spec: {
    nodeName?: string;
    schedulingGates?: { name: string }[];
    nodeSelector?: Record<string, string>;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms: { matchExpressions?: { key: string; operator: string; values?: string[] }[] }[];
        };
        preferredDuringSchedulingIgnoredDuringExecution?: {
          weight: number;
          preference: { matchExpressions?: { key: string; values?: string[] }[] };
        }[];
      };
    };
    containers: { image: string }[];
  };
}

interface Crd extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

/**
 * Applies CRDs from `deploy/crds/dev/<file>` (server-side apply, idempotent across files and runs) and waits until
 * the API server serves them.
 */
export async function installDevCrds(client: KubeClient, files: readonly string[]): Promise<void> {
  const crds = new ResourceClient<Crd>(client, CustomResourceDefinitions);
  const names: string[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(
      readFileSync(path.join(projectRoot, 'deploy/crds/dev', file), 'utf8'),
    )) {
      const crd = doc.toJS() as Crd;
      await crds.apply(crd, { fieldManager: 'pp-e2e', force: true });
      names.push(crd.metadata?.name ?? '');
    }
  }
  const deadline = Date.now() + 30_000;
  for (const name of names) {
    for (;;) {
      const got = await crds.get({ name });
      if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not Established after 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The dev CRDs of the registry policy kinds (mirror sets, ICSP, image config). */
export const REGISTRY_POLICY_DEV_CRDS = [
  'config.openshift.io_imagedigestmirrorsets.yaml',
  'config.openshift.io_imagetagmirrorsets.yaml',
  'operator.openshift.io_imagecontentsourcepolicies.yaml',
  'config.openshift.io_images.yaml',
] as const;
