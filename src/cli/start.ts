// The main job. Without KUBECONFIG it starts (or reuses) the local control plane; then it runs the operator
// until SIGINT/SIGTERM. With KUBECONFIG set it never starts anything locally.
import { isClusterRunning, readClusterState, startDevCluster } from '../devcluster/cluster.js';
import { defaultNodeSpecs } from '../devcluster/nodes.js';

const say = (line: string): void => void process.stdout.write(line + '\n');

export async function runStart(opts: { name: string }): Promise<void> {
  let kubeconfigPath = process.env.KUBECONFIG;
  if (kubeconfigPath) {
    say(`using the cluster of KUBECONFIG=${kubeconfigPath}`);
  } else {
    const existing = readClusterState(opts.name);
    if (existing && isClusterRunning(existing)) {
      say(`reusing the local cluster "${opts.name}" at ${existing.server}`);
      kubeconfigPath = existing.kubeconfigPath;
    } else {
      say(
        `starting the local cluster "${opts.name}" (first run: build the binaries with \`npm run binaries\`)`,
      );
      const cluster = await startDevCluster({
        name: opts.name,
        nodes: defaultNodeSpecs(),
        log: (l) => say(`  ${l}`),
        buildMissingBinaries: true,
      });
      kubeconfigPath = cluster.kubeconfigPath;
      say(`local cluster up at ${cluster.server}; stop it with \`npx tessera dev down\``);
    }
    say(`  export KUBECONFIG=${kubeconfigPath}`);
  }
  const controller = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => controller.abort());
  say('operator running; Ctrl-C to stop');
  await new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve()));
}
