// The CommandIO of `tessera upgrade status` for tests: output captured, the wall clock (node unavailability is
// judged by it, as oc judges it by the wall clock), no sleeping.
import type { CommandIO } from '../../src/updatestatus/command.js';
import { MILLISECOND } from '../../src/updatestatus/gotime.js';

export function captureCommandIO(): CommandIO & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    clock: () => BigInt(Date.now()) * MILLISECOND,
    sleep: async () => undefined,
    signal: new AbortController().signal,
    stdout: () => out,
    stderr: () => err,
  };
}
