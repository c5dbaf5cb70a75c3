// Work-queue instrumentation seam. The queue reports plain facts (added, started, finished, retried) to a
// WorkQueueMetrics; the Prometheus implementation (prometheus-metrics.ts) turns them into the client-go metric
// names. The default is `noopQueueMetrics`, which costs one virtual call per event.

/** What a queue tells its metrics sink. Times are clock milliseconds. */
export interface WorkQueueMetrics {
  /** A key entered the queue (or the dirty set while processing); `depth` is the queue length after it. */
  added(depth: number): void;
  /** A worker took a key that waited `queuedMs`; `depth` is the queue length after it. */
  started(queuedMs: number, depth: number): void;
  /** A worker finished a key after `workMs`. */
  finished(workMs: number): void;
  /** A key was re-added with a delay (rate-limited or addAfter). */
  retried(): void;
  /** Called on scrape with the age in ms of every key being processed right now. */
  setInFlight?(ages: () => number[]): void;
}

/** Creates the metrics sink of one queue, labelled with the queue's name. */
export type WorkQueueMetricsProvider = (queueName: string) => WorkQueueMetrics;

export const noopQueueMetrics: WorkQueueMetrics = {
  added() {},
  started() {},
  finished() {},
  retried() {},
};
