// Running the operator image for real: podman with its own storage under a test's temporary folder (so parallel
// files and runs share no containers, images or locks), and the credentials a pod gets. The flags are what works on
// these machines: runc (crun fails on this kernel's hybrid cgroups), vfs storage (no overlay mounts), the host's
// network (the API server and the registry listen on loopback) and rlimits no higher than the host's (raising them
// is not permitted). The containers run as the image's user (65532) with the Deployments' restrictions: read-only
// root file system with a writable /tmp, no capabilities, no privilege escalation.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeClient } from '../../src/runtime/index.js';

const run = promisify(execFile);

export const PODMAN_RUN_FLAGS: readonly string[] = [
  '--network',
  'host',
  '--ulimit',
  'nofile=4096:4096',
  '--ulimit',
  'nproc=4096:4096',
];

/** Where the kubelet mounts a pod's service-account credentials. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A service account's credentials as a kubelet projects them, plus the API server's address for the env. */
export interface PodCredentials {
  /** Host folder holding token, ca.crt and namespace. */
  readonly dir: string;
  readonly namespace: string;
  readonly apiServerHost: string;
  readonly apiServerPort: string;
}

/**
 * Writes what a pod of `namespace/serviceAccount` finds at SERVICE_ACCOUNT_DIR: a token from the TokenRequest API
 * (one hour), the cluster's CA and the namespace. Readable by the container's non-root user.
 */
export async function podCredentials(
  dir: string,
  admin: KubeConfig,
  client: KubeClient,
  namespace: string,
  serviceAccount: string,
): Promise<PodCredentials> {
  const cluster = admin.getCurrentCluster();
  if (!cluster?.caData)
    throw new Error('the admin kubeconfig has no embedded CA (certificate-authority-data)');
  const tr = await client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  writeFileSync(path.join(dir, 'token'), tr.status.token, { mode: 0o644 });
  writeFileSync(path.join(dir, 'ca.crt'), Buffer.from(cluster.caData, 'base64'), { mode: 0o644 });
  writeFileSync(path.join(dir, 'namespace'), namespace, { mode: 0o644 });
  const server = new URL(cluster.server);
  return { dir, namespace, apiServerHost: server.hostname, apiServerPort: server.port || '443' };
}

export interface ContainerSpec {
  /** Container name and hostname (so a leader's lease identity names its container). */
  readonly name: string;
  /** An image podman has pulled (`podman.pull`). */
  readonly image: string;
  /** Arguments after the entrypoint (`tessera`). */
  readonly args: readonly string[];
  readonly credentials?: PodCredentials;
  readonly env?: Readonly<Record<string, string>>;
  /** Read-only bind mounts: host path to container path. */
  readonly mounts?: Readonly<Record<string, string>>;
}

export interface Container {
  readonly name: string;
  /** stdout and stderr so far. */
  logs(): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceSeconds`, as the kubelet stops a pod. */
  stop(graceSeconds?: number): Promise<void>;
  running(): Promise<boolean>;
  /** Stops it at once (SIGKILL) and deletes it. */
  remove(): Promise<void>;
}

export class Podman {
  /** podman's global options: this state, runc, vfs; no events (nothing reads them). */
  private readonly global: readonly string[];

  /** podman refuses a runroot path longer than 50 characters: a short folder of its own under /tmp. */
  private readonly runRoot: string;

  /** State under `stateDir` (created); `cleanup()` removes every container and the folder. */
  constructor(private readonly stateDir: string) {
    const tmpDir = path.join(stateDir, 'tmp');
    mkdirSync(tmpDir, { recursive: true });
    this.runRoot = mkdtempSync('/tmp/podman-run-');
    this.global = [
      ...['--root', path.join(stateDir, 'root'), '--runroot', this.runRoot, '--tmpdir', tmpDir],
      ...['--storage-driver', 'vfs', '--runtime', 'runc', '--events-backend', 'none'],
    ];
  }

  private raw(args: readonly string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
    return run('podman', [...this.global, ...args], {
      encoding: 'utf8',
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
  }

  /** Runs podman with this state; rejects with its stderr. */
  async exec(args: readonly string[], timeoutMs = 120_000): Promise<string> {
    try {
      return (await this.raw(args, timeoutMs)).stdout;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === 'ENOENT')
        throw new Error(
          'podman is not installed; install podman, runc and buildah (Debian: apt-get install podman runc buildah, as .ci/run does)',
          { cause: err },
        );
      throw new Error(`podman ${args.slice(0, 2).join(' ')} failed: ${e.stderr?.trim() || e.message}`, {
        cause: err,
      });
    }
  }

  /**
   * Pulls `reference` from a registry whose certificate `caFile` signed (podman's per-registry cert dir), with the
   * credentials of `authFile` (a dockerconfigjson) when the registry wants some.
   */
  async pull(reference: string, caFile: string, authFile?: string): Promise<void> {
    const host = reference.split('/')[0] ?? '';
    const certDir = path.join(this.stateDir, 'certs.d', host);
    mkdirSync(certDir, { recursive: true });
    copyFileSync(caFile, path.join(certDir, 'ca.crt'));
    const auth = authFile ? ['--authfile', authFile] : [];
    await this.exec(['pull', '--quiet', '--cert-dir', certDir, ...auth, reference], 300_000);
  }

  /** Starts a detached container (`podman run -d`); resolves once it is running. */
  async run(spec: ContainerSpec): Promise<Container> {
    await this.exec(['run', '--detach', ...this.containerArgs(spec)]);
    return this.handle(spec.name);
  }

  /**
   * Creates the container without starting it (`podman create`: with vfs storage this copies the image's file
   * system); `start()` starts it. For timing the start alone.
   */
  async create(spec: ContainerSpec): Promise<Container & { start(): Promise<void> }> {
    await this.exec(['create', ...this.containerArgs(spec)]);
    return {
      ...this.handle(spec.name),
      start: async () => {
        await this.exec(['start', spec.name]);
      },
    };
  }

  /** `podman run`/`create` arguments: the flags that work here, the Deployments' restrictions, the pod's env. */
  private containerArgs(spec: ContainerSpec): string[] {
    const args = ['--name', spec.name, '--hostname', spec.name, ...PODMAN_RUN_FLAGS];
    args.push('--read-only', '--tmpfs', '/tmp', '--cap-drop', 'all', '--security-opt', 'no-new-privileges');
    const env: Record<string, string> = { ...spec.env };
    if (spec.credentials) {
      args.push('--volume', `${spec.credentials.dir}:${SERVICE_ACCOUNT_DIR}:ro`);
      env.KUBERNETES_SERVICE_HOST = spec.credentials.apiServerHost;
      env.KUBERNETES_SERVICE_PORT = spec.credentials.apiServerPort;
      env.POD_NAMESPACE = spec.credentials.namespace;
    }
    for (const [source, target] of Object.entries(spec.mounts ?? {}))
      args.push('--volume', `${source}:${target}:ro`);
    for (const [k, v] of Object.entries(env)) args.push('--env', `${k}=${v}`);
    return [...args, spec.image, ...spec.args];
  }

  private handle(name: string): Container {
    return {
      name,
      logs: async () => {
        // podman logs writes the container's stderr to its own stderr.
        const { stdout, stderr } = await this.raw(['logs', name], 60_000);
        return stdout + stderr;
      },
      stop: async (graceSeconds = 10) => {
        await this.exec(['stop', '--time', String(graceSeconds), name]);
      },
      running: async () =>
        (await this.exec(['inspect', '--format', '{{.State.Running}}', name])).trim() === 'true',
      remove: async () => {
        await this.exec(['rm', '--force', '--time', '0', name]);
      },
    };
  }

  /** Removes every container (running or not) and the whole state folder; never throws. */
  async cleanup(): Promise<void> {
    await this.exec(['rm', '--force', '--all', '--time', '0']).catch(() => undefined);
    await this.exec(['rmi', '--force', '--all']).catch(() => undefined);
    rmSync(this.stateDir, { recursive: true, force: true });
    rmSync(this.runRoot, { recursive: true, force: true });
  }
}
