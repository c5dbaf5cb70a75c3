import { describe, expect, it } from 'vitest';
import type { Runnable } from './runnable.js';
import { runTogether } from './run-together.js';

/** Runs until aborted, recording that it stopped. */
function waiter(stopped: string[], name: string): Runnable {
  return {
    name,
    start: (signal) =>
      new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => {
          stopped.push(name);
          resolve();
        });
      }),
  };
}

describe('runTogether', () => {
  it('stops every part when the signal aborts and resolves after all stopped', async () => {
    const stopped: string[] = [];
    const stop = new AbortController();
    const running = runTogether('both', [waiter(stopped, 'a'), waiter(stopped, 'b')]).start(stop.signal);
    stop.abort();
    await running;
    expect(stopped.sort()).toEqual(['a', 'b']);
  });

  it('stops the others when one part fails, then rethrows that failure', async () => {
    const stopped: string[] = [];
    const failing: Runnable = { start: () => Promise.reject(new Error('informer failed')) };
    const bundle = runTogether('both', [waiter(stopped, 'a'), failing], true);
    expect(bundle.needsLeaderElection).toBe(true);
    await expect(bundle.start(new AbortController().signal)).rejects.toThrow('informer failed');
    expect(stopped).toEqual(['a']);
  });
});
