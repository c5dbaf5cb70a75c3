// Runs several Runnables as one: start() resolves when all have stopped; if one fails, the others are stopped
// (through a derived signal) and the first failure is rethrown after they have all returned.
import type { Runnable } from './runnable.js';

/** `needsLeaderElection`: whether a Manager should start the bundle only while leading. Default: false. */
export function runTogether(name: string, parts: readonly Runnable[], needsLeaderElection = false): Runnable {
  return {
    name,
    needsLeaderElection,
    async start(signal: AbortSignal): Promise<void> {
      const inner = new AbortController();
      const forward = (): void => inner.abort();
      signal.addEventListener('abort', forward, { once: true });
      if (signal.aborted) inner.abort();
      let failure: unknown;
      try {
        await Promise.all(
          parts.map((p) =>
            p.start(inner.signal).catch((err: unknown) => {
              failure ??= err;
              inner.abort();
            }),
          ),
        );
      } finally {
        signal.removeEventListener('abort', forward);
      }
      if (failure !== undefined) throw failure;
    },
  };
}
