// A cheap live read of the hosted API (a one-item list of Tuned Profiles), whose answer the status writer needs
// before it presents its hosted caches as current (hosted-readability.ts). Guarantees: reconciles within
// PROBE_REUSE_MS share one result and concurrent callers share one request, so many profiles cost one probe; a
// failed probe is logged at debug level and answers false, never throws.
import { type Clock, type KubeClient, type Logger, resourcePath } from '../../runtime/index.js';
import { NTO_NAMESPACE } from '../constants.js';
import { TunedProfiles } from '../resources.js';

/** Reconciles within this long share one probe result (ms). */
const PROBE_REUSE_MS = 1_000;

export class HostedProbe {
  /** When the hosted API last answered, ms since the epoch; undefined if never. */
  lastContactAt: number | undefined;
  private lastProbe: { at: number; answered: boolean } | undefined;
  private inFlight: Promise<boolean> | undefined;
  private readonly path = resourcePath(TunedProfiles, NTO_NAMESPACE);

  constructor(
    private readonly hosted: KubeClient,
    private readonly timeoutMs: number,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Whether the hosted API answers (now, or within the last PROBE_REUSE_MS). */
  answers(signal: AbortSignal): Promise<boolean> {
    const last = this.lastProbe;
    if (last && this.clock.now() - last.at < PROBE_REUSE_MS) return Promise.resolve(last.answered);
    this.inFlight ??= this.probe(signal).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async probe(signal: AbortSignal): Promise<boolean> {
    let answered = false;
    try {
      await this.hosted.request<unknown>({
        method: 'GET',
        path: this.path,
        query: { limit: 1 },
        timeoutMs: this.timeoutMs,
        signal,
      });
      answered = true;
      this.lastContactAt = this.clock.now();
    } catch (err) {
      this.logger.debug({ err }, 'hosted API probe failed');
    }
    this.lastProbe = { at: this.clock.now(), answered };
    return answered;
  }
}
