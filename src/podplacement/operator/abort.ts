/** Resolves once `signal` aborts (at once if it has). A candidate for the runtime if other areas need it. */
export function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}
