// Child process of alerts-answer.test.ts: the update status controller's alerts reader (createLiveAlertsReader,
// as addUpdateStatusController builds it) reading once from the test's loopback Prometheus-like server, under the
// update status Deployment's heap flags, once from each URL in turn, as the controller reads on every reconcile.
// Prints one JSON line {readings: [{notice, alertsRead}]} on stdout and exits 0; an OOM or a crash shows as another
// exit code. Environment: PROMETHEUS_URLS (JSON array of base URLs).
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/runtime/index.js';
import { createLiveAlertsReader } from '../../../src/updatestatus/alertsource.js';

const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
  users: [{ name: 'u', token: 'controller-token' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
});
const client = new KubeClient(kc);
const readings: { notice: string; alertsRead: number | undefined }[] = [];
for (const prometheusUrl of JSON.parse(process.env.PROMETHEUS_URLS ?? '[]') as string[]) {
  const reader = createLiveAlertsReader(kc, client, { prometheusUrl, userAgent: 'tessera-updatestatus' });
  const reading = await reader.read();
  await reader.close();
  readings.push({ notice: reading.notice, alertsRead: reading.alerts?.data?.alerts?.length });
}
await client.close();
process.stdout.write(`${JSON.stringify({ readings })}\n`);
