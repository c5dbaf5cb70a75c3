// Child process for the leader-election test: a Manager with leader election whose only controller "reconciles"
// one key in a loop and appends `begin|end <identity> <epoch ms>` lines to a log file. Run with tsx:
//   tsx leader-child.ts <kubeconfig> <lease-namespace> <lease-name> <identity> <log-file>
import { appendFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { Manager } from '../../../src/runtime/manager.js';
import { createLogger } from '../../../src/runtime/logging.js';

const [kubeconfig, namespace, leaseName, identity, logFile] = process.argv.slice(2);
if (!kubeconfig || !namespace || !leaseName || !identity || !logFile) {
  process.stderr.write(
    'usage: leader-child.ts <kubeconfig> <lease-namespace> <lease-name> <identity> <log-file>\n',
  );
  process.exit(2);
}
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const mark = (what: string): void => appendFileSync(logFile, `${what} ${identity} ${Date.now()}\n`);
const mgr = new Manager({
  kubeConfig: kc,
  name: 'leader-test',
  probes: false,
  logger: createLogger({ level: 'info', destination: process.stderr }),
  leaderElection: { leaseNamespace: namespace, leaseName, identity },
});
const controller = mgr.newController({
  name: 'ticker',
  reconciler: {
    async reconcile(_key, signal) {
      mark('begin');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 150);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      });
      mark('end');
      return { requeueAfterMs: 50 };
    },
  },
});
controller.enqueue('tick');
mark('started');
await mgr.start();
mark('exited');
