import { describe, expect, it } from 'vitest';
import { type KubeClient, silentLogger } from '../../runtime/index.js';
import { HostedProbe } from './hosted-probe.js';
import { FakeClock } from '../../runtime/testing/index.js';

/** A hosted API whose answers the test controls, counting the requests it gets. */
function hostedApi(answer: () => Promise<unknown>): { client: KubeClient; requests: () => number } {
  let requests = 0;
  const client = {
    request: () => {
      requests++;
      return answer();
    },
  } as unknown as KubeClient;
  return { client, requests: () => requests };
}

describe('HostedProbe', () => {
  it('shares one request between concurrent callers and reuses its answer for a second', async () => {
    const clock = new FakeClock();
    const api = hostedApi(() => Promise.resolve({ items: [] }));
    const probe = new HostedProbe(api.client, 5_000, clock, silentLogger);
    const signal = new AbortController().signal;
    const answers = await Promise.all(Array.from({ length: 50 }, () => probe.answers(signal)));
    expect(answers.every(Boolean)).toBe(true);
    expect(await probe.answers(signal)).toBe(true);
    expect(api.requests()).toBe(1);
    expect(probe.lastContactAt).toBe(clock.now());
    await clock.advance(1_000);
    await probe.answers(signal);
    expect(api.requests()).toBe(2);
  });

  it('answers false when the hosted API fails, keeping the last contact time', async () => {
    const clock = new FakeClock();
    let up = true;
    const api = hostedApi(() => (up ? Promise.resolve({}) : Promise.reject(new Error('connection refused'))));
    const probe = new HostedProbe(api.client, 5_000, clock, silentLogger);
    const signal = new AbortController().signal;
    expect(await probe.answers(signal)).toBe(true);
    const contact = probe.lastContactAt;
    up = false;
    await clock.advance(1_000);
    expect(await probe.answers(signal)).toBe(false);
    expect(probe.lastContactAt).toBe(contact);
  });
});
