// Child process of registry-json.test.ts: the pod placement controller's real reconcile path (PodReconciler over
// CachingInspector over RegistryInspector) for one gated pod whose images live on the test's loopback registry,
// run under the controller Deployment's heap flags. Only the API server is replaced: the pod comes from a map and
// the patch and events are recorded. Prints one JSON line {patches, events} on stdout and exits 0; an OOM or a
// crash shows as another exit code.
// Environment: REGISTRY_CA (PEM), IMAGES (JSON array of image references).
import { realClock, silentLogger, type EventRecorder } from '../../../src/runtime/index.js';
import { CachingInspector, RegistryInspector } from '../../../src/registry/index.js';
import { clusterConfig, pod } from '../../../src/podplacement/builders.js';
import type { PodMergePatch } from '../../../src/podplacement/placement-plan.js';
import { PodReconciler } from '../../../src/podplacement/pod-reconciler.js';
import { PullSecretResolver } from '../../../src/podplacement/pull-secrets.js';

const images = JSON.parse(process.env.IMAGES ?? '[]') as string[];
const gated = pod('web', 'tenant')
  .withImages(...images)
  .withGate()
  .withResourceVersion('1')
  .build();
const patches: PodMergePatch[] = [];
const events: { type: string; reason: string; message: string }[] = [];
const recorder: EventRecorder = {
  event: (_object, type, reason, message) => void events.push({ type, reason, message }),
};
const inspector = new RegistryInspector({
  caCertificates: [process.env.REGISTRY_CA ?? ''],
  retry: { maxRetries: 0 },
});
const reconciler = new PodReconciler({
  getPod: (key) => (key === 'tenant/web' && patches.length === 0 ? gated : undefined),
  patchPod: async (_namespace, _name, patch) => void patches.push(patch),
  clusterConfig: () => clusterConfig(),
  podPlacementConfigs: () => [],
  inspector: new CachingInspector(inspector),
  pullSecrets: new PullSecretResolver({ getSecret: async () => undefined, globalSecret: () => undefined }),
  events: recorder,
  operatorNamespace: 'tessera',
  clock: realClock,
  logger: silentLogger,
});
await reconciler.reconcile('tenant/web', new AbortController().signal);
await inspector.close();
process.stdout.write(`${JSON.stringify({ patches, events })}\n`);
