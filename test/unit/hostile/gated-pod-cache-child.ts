// Child process of list-pages.test.ts: the pod placement controller's gated-pod informer (gatedPodInformer on a
// SharedInformerFactory, as the operator builds it) against the test's loopback API server, under the controller
// Deployment's heap flags. Prints one JSON line {cached, images, cachedBytes} once synced and exits 0; an OOM shows
// as another exit code. Environment: KUBECONFIG_PATH.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, SharedInformerFactory } from '../../../src/runtime/index.js';
import { gatedPodInformer } from '../../../src/podplacement/operator/pod-controller.js';

const kc = new KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG_PATH ?? '');
const client = new KubeClient(kc);
const factory = new SharedInformerFactory({ client });
const gated = gatedPodInformer(factory);
const stop = new AbortController();
const running = factory.start(stop.signal);
await gated.waitForSync();
const pods = gated.getIndexer().list();
const images = [...new Set(pods.flatMap((p) => (p.spec?.containers ?? []).map((c) => c.image)))];
process.stdout.write(
  `${JSON.stringify({ cached: pods.length, images, cachedBytes: JSON.stringify(pods).length })}\n`,
);
// What is measured is done. Shutting the informer down is not waited for: against this stand-in server an abort
// during the open watch sometimes never settles (seen with the code before this change too; reported separately).
stop.abort();
void running;
void client.close();
process.exit(0);
