// Prometheus sink for work-queue metrics, with the metric names and `name` label client-go uses, so existing
// dashboards and alerts work unchanged. One provider per registry; queues of the same name share series.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WorkQueueMetrics, WorkQueueMetricsProvider } from './metrics.js';

// client-go buckets: 1e-8 .. 1e+1 seconds, factor 10.
const DURATION_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

/** Registers the workqueue_* metrics in `registry` and returns a provider for queues to report into. */
export function prometheusWorkQueueMetrics(registry: Registry): WorkQueueMetricsProvider {
  const registers = [registry];
  const inFlight = new Map<string, () => number[]>();
  const depth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'],
    registers,
  });
  const adds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'],
    registers,
  });
  const latency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested.',
    labelNames: ['name'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const work = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    labelNames: ['name'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const retries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'],
    registers,
  });
  new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration.",
    labelNames: ['name'],
    registers,
    collect() {
      for (const [name, ages] of inFlight) this.set({ name }, ages().reduce((a, b) => a + b, 0) / 1000);
    },
  });
  new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['name'],
    registers,
    collect() {
      for (const [name, ages] of inFlight) this.set({ name }, Math.max(0, ...ages()) / 1000);
    },
  });

  return (name: string): WorkQueueMetrics => {
    const d = depth.labels({ name });
    const a = adds.labels({ name });
    const l = latency.labels({ name });
    const w = work.labels({ name });
    const r = retries.labels({ name });
    return {
      added(n) {
        a.inc();
        d.set(n);
      },
      started(queuedMs, n) {
        l.observe(queuedMs / 1000);
        d.set(n);
      },
      finished(workMs) {
        w.observe(workMs / 1000);
      },
      retried() {
        r.inc();
      },
      setInFlight(ages) {
        inFlight.set(name, ages);
      },
    };
  };
}
