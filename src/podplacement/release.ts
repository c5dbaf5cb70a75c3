// Pure parts of `tessera podplacement release`: whether the controller is running (from its leader Lease), and the
// summary of a run. The command releases pods by hand only when nothing else will: a running controller places and
// releases gated pods itself, and releasing them first would skip their placement.
import { fingerprintOf, type LeaseSpec } from '../runtime/index.js';

/** What the controller's leader Lease says about it at `nowMs` (local clock). */
export type ControllerState =
  | { readonly running: true; readonly holder: string; readonly renewedAgoMs: number }
  | {
      readonly running: false;
      readonly why: 'no-lease' | 'released' | 'expired';
      readonly renewedAgoMs?: number;
    };

/**
 * Running when a holder renewed the Lease within its duration, by this host's clock. The renewal time was written by
 * the holder's clock, so `expired` is only a first look: confirm it with leaseRenewed over one lease duration (a
 * clock running ahead here would otherwise take a live controller for a dead one). A clock running behind can make
 * a dead controller look alive: that is what --force is for.
 */
export function controllerState(lease: LeaseSpec | undefined, nowMs: number): ControllerState {
  if (!lease) return { running: false, why: 'no-lease' };
  const holder = lease.holderIdentity ?? '';
  if (!holder) return { running: false, why: 'released' };
  const renewed = Date.parse(lease.renewTime ?? lease.acquireTime ?? '');
  const durationMs = (lease.leaseDurationSeconds ?? 0) * 1000;
  if (Number.isNaN(renewed)) return { running: false, why: 'expired' };
  const renewedAgoMs = Math.max(0, nowMs - renewed);
  return renewedAgoMs <= durationMs
    ? { running: true, holder, renewedAgoMs }
    : { running: false, why: 'expired', renewedAgoMs };
}

/** Whether the Lease record changed between two reads (renewed or taken over): its holder is alive. */
export function leaseRenewed(before: LeaseSpec | undefined, after: LeaseSpec | undefined): boolean {
  return fingerprintOf(before) !== fingerprintOf(after);
}

/** How long to watch a Lease that looks expired before believing it: its duration, at most a minute. */
export function leaseConfirmMs(lease: LeaseSpec): number {
  return Math.min(60_000, Math.max(1_000, (lease.leaseDurationSeconds ?? 15) * 1000));
}

/** One pod's result. */
export interface ReleaseResult {
  readonly pod: string;
  readonly outcome: 'released' | 'would-release' | 'not-gated' | 'failed';
  readonly error?: string;
}

/** The lines printed: one per pod released (or that would be) or failed, then a count. */
export function renderReleaseResults(results: readonly ReleaseResult[], dryRun: boolean): string {
  const lines: string[] = [];
  for (const r of results) {
    if (r.outcome === 'released') lines.push(`released ${r.pod}`);
    else if (r.outcome === 'would-release') lines.push(`would release ${r.pod} (dry run)`);
    else if (r.outcome === 'failed') lines.push(`failed ${r.pod}: ${r.error ?? 'unknown error'}`);
  }
  const count = (o: ReleaseResult['outcome']): number => results.filter((r) => r.outcome === o).length;
  const done = dryRun
    ? `${count('would-release')} pod(s) would be released`
    : `${count('released')} pod(s) released`;
  const failed = count('failed');
  lines.push(failed > 0 ? `${done}, ${failed} failed` : done);
  return `${lines.join('\n')}\n`;
}
