// The tests' one wait for observed state: it returns the first passing check, and when it gives up, the error names
// what it waited for, the last failure, and what `explain` adds (logs, objects as they are then).
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/cluster.js';

describe('eventually', () => {
  it('returns what the first passing check returns', async () => {
    let calls = 0;
    const got = await eventually(
      async () => {
        if (++calls < 3) throw new Error('not yet');
        return 'ready';
      },
      { intervalMs: 1 },
    );
    expect(got).toBe('ready');
    expect(calls).toBe(3);
  });

  it('gives up naming what it waited for, the last failure and the explanation', async () => {
    await expect(
      eventually(
        async () => {
          throw new Error('pod is Pending');
        },
        {
          timeoutMs: 0,
          intervalMs: 1,
          what: 'the pod to run',
          explain: async () => '--- kubelet log: no image',
        },
      ),
    ).rejects.toThrow('timed out waiting for the pod to run: pod is Pending\n--- kubelet log: no image');
  });
});
