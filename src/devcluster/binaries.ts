// Where the Go-built control-plane binaries live. hack/versions.env pins each component's version and
// hack/build-binaries.sh builds them into <cache>/bin/<component>-<version>/; this module finds them and
// fails with instructions when one is missing, never silently falling back to whatever is on PATH.
import { accessSync, constants, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DevClusterError } from './errors.js';

/** The repository root (this file sits two levels below it, in src/ or dist/). */
export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ComponentVersions {
  readonly kubernetes: string;
  readonly etcd: string;
  readonly kwok: string;
}

export type BinaryName =
  'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kubectl' | 'kwok';

/** Paths of the binaries, plus kwok's default stage files (extracted from its release by the build script). */
export type BinaryPaths = Readonly<Record<BinaryName, string>> & { readonly kwokStages: readonly string[] };

export const KWOK_STAGE_FILES = [
  'node-initialize.yaml',
  'node-heartbeat-with-lease.yaml',
  'pod-ready.yaml',
  'pod-complete.yaml',
  'pod-delete.yaml',
] as const;

/** Parses the KEY=value lines of hack/versions.env (comments and blank lines ignored). */
export function parseVersionsEnv(text: string): ComponentVersions {
  const values = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const get = (key: string): string => {
    const value = values.get(key);
    if (!value)
      throw new DevClusterError('TESSERA_DEVCLUSTER_CONFIG', `hack/versions.env does not set ${key}`);
    return value;
  };
  return { kubernetes: get('KUBERNETES_VERSION'), etcd: get('ETCD_VERSION'), kwok: get('KWOK_VERSION') };
}

export function readComponentVersions(root: string = projectRoot): ComponentVersions {
  return parseVersionsEnv(readFileSync(path.join(root, 'hack', 'versions.env'), 'utf8'));
}

/** `$TESSERA_CACHE_DIR`, else `$XDG_CACHE_HOME/tessera`, else `~/.cache/tessera` (same rule as the build script). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TESSERA_CACHE_DIR) return env.TESSERA_CACHE_DIR;
  return path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'tessera');
}

export function binaryPaths(
  versions: ComponentVersions = readComponentVersions(),
  cache = cacheDir(),
): BinaryPaths {
  const bin = path.join(cache, 'bin');
  const k8s = path.join(bin, `kubernetes-${versions.kubernetes}`);
  return {
    etcd: path.join(bin, `etcd-${versions.etcd}`, 'etcd'),
    'kube-apiserver': path.join(k8s, 'kube-apiserver'),
    'kube-controller-manager': path.join(k8s, 'kube-controller-manager'),
    'kube-scheduler': path.join(k8s, 'kube-scheduler'),
    kubectl: path.join(k8s, 'kubectl'),
    kwok: path.join(bin, `kwok-${versions.kwok}`, 'kwok'),
    kwokStages: KWOK_STAGE_FILES.map((f) => path.join(bin, `kwok-${versions.kwok}`, 'stages', f)),
  };
}

/** Returns the binaries' paths, or throws naming each missing one and the command that builds them. */
export function requireBinaries(paths: BinaryPaths = binaryPaths()): BinaryPaths {
  const { kwokStages, ...executables } = paths;
  const missing = [...Object.values(executables), ...kwokStages].filter((p) => {
    try {
      accessSync(p, p.endsWith('.yaml') ? constants.R_OK : constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_BINARIES_MISSING',
      `control-plane binaries are missing:\n  ${missing.join('\n  ')}\n` +
        'Build them once with `npm run binaries` (bash hack/build-binaries.sh; a cold build takes several ' +
        'minutes, later runs reuse the cache).',
    );
  }
  return paths;
}

/**
 * Like `requireBinaries`, but builds what is missing first by running hack/build-binaries.sh (its progress goes
 * to stderr). For interactive commands (`tessera dev up`, `npm start`); tests use `requireBinaries` and fail.
 */
export async function ensureBinaries(root: string = projectRoot): Promise<BinaryPaths> {
  try {
    return requireBinaries();
  } catch (err) {
    if (!(err instanceof DevClusterError) || err.code !== 'TESSERA_DEVCLUSTER_BINARIES_MISSING') throw err;
  }
  process.stderr.write(
    'Building the local control plane from the Go module proxy (first run only; several minutes on two cores)...\n',
  );
  const { spawn } = await import('node:child_process');
  const script = path.join(root, 'hack', 'build-binaries.sh');
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (status) => resolve(status ?? 1));
  });
  if (code !== 0) {
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_BINARIES_MISSING',
      `${script} failed (exit ${code}); see its output above`,
    );
  }
  return requireBinaries();
}
