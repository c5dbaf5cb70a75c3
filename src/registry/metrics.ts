// Prometheus metrics of the inspection cache, with the reference operator's names and buckets
// (pod-placement.constants.json). Register once per prom-client Registry; a second call on the same registry
// throws (prom-client refuses duplicate names).
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { InspectionCacheMetrics } from './caching-inspector.js';

export const inspectionCacheSizeMetric = 'mto_inspection_cache_size';
export const cacheHitDurationMetric = 'mto_cache_hit_processing_duration_seconds';
export const cacheMissDurationMetric = 'mto_cache_miss_processing_duration_seconds';
export const histogramBucketsSeconds: readonly number[] = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 2, 4,
];

/** Creates and registers the cache metrics on `registry`. */
export function createInspectionCacheMetrics(registry: Registry): InspectionCacheMetrics {
  const size = new Gauge({
    name: inspectionCacheSizeMetric,
    help: 'Entries in the image inspection cache',
    registers: [registry],
  });
  const hit = new Histogram({
    name: cacheHitDurationMetric,
    help: 'Time to answer an image inspection from the cache, in seconds',
    buckets: [...histogramBucketsSeconds],
    registers: [registry],
  });
  const miss = new Histogram({
    name: cacheMissDurationMetric,
    help: 'Time to answer an image inspection that missed the cache (registry round trips), in seconds',
    buckets: [...histogramBucketsSeconds],
    registers: [registry],
  });
  return {
    setCacheSize: (entries) => size.set(entries),
    observeHit: (seconds) => hit.observe(seconds),
    observeMiss: (seconds) => miss.observe(seconds),
  };
}
