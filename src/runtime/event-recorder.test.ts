// The recorder's write scheduling, against a stand-in for the API client that records calls and lets the test
// decide when each answer arrives. What the API server itself does with Events is tested in
// test/integration/runtime/writes-events-manager.test.ts.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { KubeClient, RequestOptions } from './client.js';
import { KubeEventRecorder } from './event-recorder.js';

interface Call {
  method: string;
  name: string;
  count: number;
  answer: () => void;
}

/** Answers nothing until the test calls `answer()` on a recorded call. */
function heldClient(): { client: KubeClient; calls: Call[] } {
  const calls: Call[] = [];
  const client = {
    request(opts: RequestOptions): Promise<unknown> {
      const body = opts.body as { metadata?: { name?: string }; count?: number } | undefined;
      return new Promise((resolve) => {
        calls.push({
          method: opts.method,
          name: body?.metadata?.name ?? opts.path.split('/').pop() ?? '',
          count: body?.count ?? 0,
          answer: () => resolve({}),
        });
      });
    },
  } as unknown as KubeClient;
  return { client, calls };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Answers every call, including those the answers release, until no new call comes. */
async function answerAll(calls: Call[]): Promise<void> {
  let answered = 0;
  while (answered < calls.length) {
    while (answered < calls.length) calls[answered++]?.answer();
    await settle();
  }
}
const pod = (i: number) => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: `p${i}`, uid: `u${i}` });

describe('KubeEventRecorder', () => {
  it('writes distinct events concurrently, up to its concurrency', async () => {
    const { client, calls } = heldClient();
    const rec = new KubeEventRecorder({ client, component: 'c', instance: 'i', api: 'v1', concurrency: 3 });
    for (let i = 0; i < 10; i++) rec.event(pod(i), 'Normal', 'Placed', 'placed');
    await settle();
    expect(calls).toHaveLength(3);
    calls[0]?.answer();
    await settle();
    expect(calls).toHaveLength(4);
    await answerAll(calls);
    await rec.flush();
    expect(new Set(calls.map((c) => c.name)).size).toBe(10);
    expect(rec.droppedEvents()).toBe(0);
  });

  it('never writes one Event twice at once, and folds repeats queued behind it into one patch', async () => {
    const { client, calls } = heldClient();
    const rec = new KubeEventRecorder({ client, component: 'c', instance: 'i', api: 'v1', concurrency: 8 });
    rec.event(pod(1), 'Warning', 'Failed', 'same');
    await settle();
    expect(calls.map((c) => c.method)).toEqual(['POST']);
    // Four repeats while the create is in flight: one patch follows, with the last count.
    for (let i = 0; i < 4; i++) rec.event(pod(1), 'Warning', 'Failed', 'same');
    await settle();
    expect(calls).toHaveLength(1);
    calls[0]?.answer();
    await settle();
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH']);
    calls[1]?.answer();
    await rec.flush();
    expect(calls).toHaveLength(2);
  });

  it('drops beyond its byte budget and counts what it dropped', async () => {
    const { client, calls } = heldClient();
    const registry = new Registry();
    const rec = new KubeEventRecorder({
      client,
      component: 'c',
      instance: 'i',
      concurrency: 1,
      maxPendingBytes: 8 * 1024,
      registry,
      burst: 1000,
    });
    const message = 'x'.repeat(1000); // ~2.3 KiB per queued event
    for (let i = 0; i < 10; i++) rec.event(pod(i), 'Normal', 'Placed', message);
    await settle();
    // One in flight, three queued (about 7 KiB), six dropped.
    expect(rec.droppedEvents()).toBe(6);
    const metric = await registry.getSingleMetricAsString('tessera_events_dropped_total');
    expect(metric).toContain('tessera_events_dropped_total{reason="queue-full"} 6');
    await answerAll(calls);
    await rec.flush();
    expect(calls).toHaveLength(4);
  });
});
