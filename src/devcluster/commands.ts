// The actions behind `tessera dev ...`: thin wrappers that print for people around cluster.ts.
import path from 'node:path';
import { binaryPaths } from './binaries.js';
import { defaultNodeSpecs } from './nodes.js';
import { DevClusterError } from './errors.js';
import {
  type LocalRegistryInfo,
  isClusterRunning,
  readClusterState,
  startDevCluster,
  stopClusterByState,
  defaultStateRoot,
} from './cluster.js';
import { isRunning } from './processes.js';
import { describeRealNodes } from './real-nodes.js';

const out = (line: string): void => void process.stdout.write(line + '\n');
const progress = (line: string): void => void process.stderr.write(`[dev] ${line}\n`);

/**
 * `workersPerArch` is --workers-per-arch, checked by its parser; undefined: defaultNodeSpecs' default. `realNodes`
 * is --real-nodes (true: given without a count, so one).
 */
export async function devUp(opts: {
  name: string;
  workersPerArch?: number;
  realNodes?: number | true;
}): Promise<void> {
  const existing = readClusterState(opts.name);
  if (existing && isClusterRunning(existing)) {
    out(`cluster "${opts.name}" is already running at ${existing.server}`);
    if (existing.registry) printRegistry(existing.registry);
    printUsage(opts.name, existing.kubeconfigPath);
    return;
  }
  const started = Date.now();
  const cluster = await startDevCluster({
    name: opts.name,
    nodes: defaultNodeSpecs(opts.workersPerArch),
    log: progress,
    buildMissingBinaries: true,
    registry: true,
    realNodes: opts.realNodes === true ? 1 : (opts.realNodes ?? 0),
  });
  out(
    `cluster "${cluster.name}" is up at ${cluster.server} (Kubernetes ${cluster.kubernetesVersion}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  out(`state and logs: ${cluster.stateDir}`);
  if (cluster.registry) printRegistry(cluster.registry);
  for (const node of cluster.realNodes?.nodes ?? []) {
    out(`real node: ${node.name} (${node.addresses.nodeIp}; logs in ${node.dir}/logs)`);
  }
  printUsage(opts.name, cluster.kubeconfigPath);
}

function printRegistry(registry: LocalRegistryInfo): void {
  out(
    `local registry: ${registry.host} (CA ${registry.caFile}; pull secret ${registry.dockerConfigJsonFile})`,
  );
}

function printUsage(name: string, kubeconfigPath: string): void {
  const nameFlag = name === 'tessera' ? '' : ` --name ${name}`;
  out('');
  out('Use it with:');
  out(`  eval "$(tessera dev env${nameFlag})"`);
  out('  kubectl get nodes');
  out(`(or KUBECONFIG=${kubeconfigPath}); stop it with \`tessera dev down${nameFlag}\`.`);
}

export async function devDown(opts: { name: string; wipe: boolean }): Promise<void> {
  const state = readClusterState(opts.name);
  if (!state) {
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_NOT_FOUND',
      `no cluster named "${opts.name}" under ${defaultStateRoot()}`,
    );
  }
  await stopClusterByState(state, { wipe: opts.wipe });
  out(
    `cluster "${opts.name}" stopped${opts.wipe ? ' and its state deleted' : `; state kept in ${state.stateDir}`}`,
  );
}

export async function devStatus(opts: { name: string }): Promise<number> {
  const state = readClusterState(opts.name);
  if (!state) {
    out(`cluster "${opts.name}": not created (start it with \`tessera dev up\`)`);
    return 1;
  }
  const running = isClusterRunning(state);
  out(`cluster "${opts.name}": ${running ? 'running' : 'stopped'}  ${state.server}`);
  out(`kubeconfig: ${state.kubeconfigPath}`);
  for (const [name, proc] of Object.entries(state.processes)) {
    out(
      `  ${name.padEnd(24)} pid ${String(proc.pid).padEnd(8)} ${isRunning(proc) ? 'running' : 'exited'}  log ${proc.logFile}`,
    );
  }
  if (state.realNodes) for (const line of describeRealNodes(state.realNodes)) out(line);
  return running ? 0 : 1;
}

export async function devEnv(opts: { name: string }): Promise<void> {
  const state = readClusterState(opts.name);
  if (!state)
    throw new DevClusterError(
      'TESSERA_DEVCLUSTER_NOT_FOUND',
      `no cluster named "${opts.name}"; start it with \`tessera dev up\``,
    );
  out(`export KUBECONFIG=${shellQuote(state.kubeconfigPath)}`);
  out(`export PATH=${shellQuote(path.dirname(binaryPaths().kubectl))}:"$PATH"`);
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
