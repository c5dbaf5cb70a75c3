// The operating system's tools the tests need beyond Node and Go, in one list: each command, the Debian package
// that brings it and what needs it. `npm test`'s global setup (test/support/global-setup.ts) and `.ci/run` (which
// runs this file) call ensureSystemTools: as root it installs what is missing with apt-get (refreshing the package
// lists once if the install fails, for a fresh machine's missing or stale lists); as another user it stops at once
// with the exact command to run, so a fresh clone's `npm ci && npm test` either gets its tools or says how.
// The Go-built binaries are not here: hack/build-binaries.sh builds those from the Go module proxy, and gives opm a
// containers signature policy of its own, so no test needs /etc/containers/policy.json either.
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../src/devcluster/binaries.js';

export interface SystemTool {
  /** The command the tests run (looked up on PATH and in the sbin folders, where podman finds runc). */
  readonly command: string;
  /** The Debian package that provides it. */
  readonly debianPackage: string;
  /** What needs it, said when it is missing. */
  readonly neededBy: string;
}

/** Everything `npm test` runs that neither npm nor hack/build-binaries.sh provides. */
export const SYSTEM_TOOLS: readonly SystemTool[] = [
  {
    command: 'podman',
    debianPackage: 'podman',
    neededBy: 'the container tests run the operator image (test/integration/image/container.test.ts)',
  },
  {
    command: 'runc',
    debianPackage: 'runc',
    neededBy: "podman's runtime in the container tests (crun fails on hybrid cgroups)",
  },
  {
    command: 'dpkg-deb',
    debianPackage: 'dpkg',
    neededBy: 'the image build unpacks the base image from Debian packages (hack/image/build.sh)',
  },
  {
    command: 'curl',
    debianPackage: 'curl',
    neededBy: "the image build downloads Debian's packages and Node (hack/image/build.sh)",
  },
  {
    command: 'openssl',
    debianPackage: 'openssl',
    neededBy: "the image build checks Node's download against its lock (hack/image/build.sh)",
  },
  {
    command: 'ip',
    debianPackage: 'iproute2',
    neededBy:
      'the real-node test gives each kubelet node a network namespace and veth (src/devcluster/real-nodes.ts)',
  },
  {
    command: 'iptables',
    debianPackage: 'iptables',
    neededBy: "kube-proxy and the CNI bridge on the real-node test's kubelet node",
  },
  {
    command: 'nsenter',
    debianPackage: 'util-linux',
    neededBy: "the real-node test runs the CNI plugins inside the node's network namespace",
  },
  {
    command: 'busybox',
    debianPackage: 'busybox-static',
    neededBy:
      "OLM's util image on the real node needs a static cp (test/integration/devcluster/real-pods.test.ts)",
  },
  {
    command: 'chromium',
    debianPackage: 'chromium',
    neededBy: 'the dashboard browser test drives /usr/bin/chromium',
  },
];

/** What this machine is, as far as installing goes. Injected in tests. */
export interface SystemProbe {
  /** Whether `command` can be run. */
  has(command: string): boolean;
  readonly isRoot: boolean;
  /** Whether apt-get is there (Debian, Ubuntu). */
  readonly hasApt: boolean;
}

export type SystemToolsPlan =
  | { readonly kind: 'ready' }
  | {
      readonly kind: 'install';
      readonly missing: readonly SystemTool[];
      readonly packages: readonly string[];
    }
  | { readonly kind: 'refuse'; readonly missing: readonly SystemTool[]; readonly message: string };

/** apt-get's options for an unattended install: no prompts, no recommended extras, wait for another apt's lock. */
export const APT_INSTALL_ARGS: readonly string[] = [
  'install',
  '-y',
  '--no-install-recommends',
  '-o',
  'DPkg::Lock::Timeout=600',
];

/** The one command a user without root runs to install `packages` (lists refreshed first, as a fresh machine needs). */
export function installCommand(packages: readonly string[]): string {
  return `sudo sh -c 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${packages.join(' ')}'`;
}

/** Whether to install, refuse or go on: the decision alone, from the list and what the probe sees. */
export function planSystemTools(tools: readonly SystemTool[], probe: SystemProbe): SystemToolsPlan {
  const missing = tools.filter((tool) => !probe.has(tool.command));
  if (missing.length === 0) return { kind: 'ready' };
  const packages = [...new Set(missing.map((tool) => tool.debianPackage))];
  if (probe.isRoot && probe.hasApt) return { kind: 'install', missing, packages };
  const listed = missing
    .map((tool) => `  ${tool.command} (Debian package ${tool.debianPackage}): ${tool.neededBy}`)
    .join('\n');
  const how = probe.hasApt
    ? `Install ${missing.length === 1 ? 'it' : 'them'} as root, then run the tests again:\n  ${installCommand(packages)}\n` +
      '(As root, `npm test` installs what is missing by itself.)'
    : `This machine has no apt-get: install ${missing.length === 1 ? 'it' : 'them'} with its own package manager ` +
      `(Debian's package names: ${packages.join(' ')}), then run the tests again.`;
  return {
    kind: 'refuse',
    missing,
    message: `the tests need ${missing.length === 1 ? 'a tool that is' : 'tools that are'} not installed:\n${listed}\n${how}`,
  };
}

/** Folders searched besides PATH: runc lives in /usr/sbin, which a user's PATH often lacks (podman looks there). */
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** Whether `command` is an executable file on `PATH` or in the sbin folders. */
export function hasCommand(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const dirs = [...(env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== ''), ...SBIN_DIRS];
  return dirs.some((dir) => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** This machine, as it is. */
export function localProbe(env: NodeJS.ProcessEnv = process.env): SystemProbe {
  return {
    has: (command) => hasCommand(command, env),
    isRoot: process.getuid?.() === 0,
    hasApt: hasCommand('apt-get', env),
  };
}

/** Where apt-get's output of the last install goes. */
export function systemToolsLogPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheDir(env), 'system-tools.log');
}

export class SystemToolsError extends Error {
  override readonly name = 'SystemToolsError';

  constructor(message: string) {
    super(message);
    // Its message is an instruction to the user; where in the setup it was thrown would only bury it.
    this.stack = `${this.name}: ${message}`;
  }
}

export interface EnsureSystemToolsOptions {
  readonly tools?: readonly SystemTool[];
  readonly probe?: SystemProbe;
  /** Runs apt-get with `args`, its output appended to `logFile`; resolves with its exit status. */
  readonly apt?: (args: readonly string[], logFile: string) => Promise<number>;
  readonly log?: (line: string) => void;
  readonly logFile?: string;
}

/**
 * Makes sure every tool of the list is there: nothing to do, installs what is missing (root and apt-get), or
 * throws a SystemToolsError whose message lists what is missing and the command that installs it.
 */
export async function ensureSystemTools(options: EnsureSystemToolsOptions = {}): Promise<void> {
  const tools = options.tools ?? SYSTEM_TOOLS;
  const probe = options.probe ?? localProbe();
  const apt = options.apt ?? runApt;
  const log = options.log ?? ((line: string) => process.stderr.write(`[system-tools] ${line}\n`));
  const logFile = options.logFile ?? systemToolsLogPath();
  const plan = planSystemTools(tools, probe);
  if (plan.kind === 'ready') return;
  if (plan.kind === 'refuse') throw new SystemToolsError(plan.message);
  const started = Date.now();
  log(
    `installing ${plan.packages.join(' ')} from Debian's packages for ${plan.missing.map((t) => t.command).join(', ')}; ` +
      `apt-get's output goes to ${logFile}`,
  );
  mkdirSync(path.dirname(logFile), { recursive: true });
  closeSync(openSync(logFile, 'w'));
  const install = [...APT_INSTALL_ARGS, ...plan.packages];
  let status = await apt(install, logFile);
  if (status !== 0) {
    log('the install failed; refreshing the package lists (apt-get update) and trying once more');
    status = (await apt(['update'], logFile)) === 0 ? await apt(install, logFile) : 1;
  }
  const still = plan.missing.filter((tool) => !probe.has(tool.command));
  if (status !== 0 || still.length > 0)
    throw new SystemToolsError(
      `apt-get install ${plan.packages.join(' ')} ${status !== 0 ? `failed (exit ${status})` : `left ${still.map((t) => t.command).join(', ')} missing`}; ` +
        `its output is in ${logFile}. Install them by hand (${installCommand(plan.packages)}) and run the tests again.`,
    );
  log(`installed ${plan.packages.join(' ')} in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** Runs apt-get with `args`, unattended, its output appended to `logFile`; resolves with its exit status. */
export function runApt(args: readonly string[], logFile: string): Promise<number> {
  return new Promise((resolve) => {
    const fd = openSync(logFile, 'a');
    const child = spawn('apt-get', [...args], {
      stdio: ['ignore', fd, fd],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    // 'error' (apt-get could not start) or 'close', whichever comes first, ends it.
    let done = false;
    const end = (status: number): void => {
      if (done) return;
      done = true;
      closeSync(fd);
      resolve(status);
    };
    child.on('error', () => end(127));
    child.on('close', (code) => end(code ?? 1));
  });
}

// `tsx hack/system-tools.ts` (.ci/run): installs what is missing, or prints what to run and exits 1.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureSystemTools().then(
    () => process.stderr.write(`[system-tools] ready: ${SYSTEM_TOOLS.map((t) => t.command).join(', ')}\n`),
    (err: unknown) => {
      process.stderr.write(`[system-tools] ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
