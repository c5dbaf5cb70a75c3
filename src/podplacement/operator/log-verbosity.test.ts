import { describe, expect, it } from 'vitest';
import type { ClusterPodPlacementConfig } from '../api/schema.js';
import { verbosityChange } from './log-verbosity.js';

const config = (logVerbosity?: 'Normal' | 'Debug' | 'Trace' | 'TraceAll'): ClusterPodPlacementConfig =>
  ({
    metadata: { name: 'cluster' },
    spec: logVerbosity ? { logVerbosity } : {},
  }) as ClusterPodPlacementConfig;

describe('verbosityChange', () => {
  it("maps the first config to its log level: Normal (also when unset) is the process's own level", () => {
    expect(verbosityChange(undefined, config(), 'info')).toEqual({ verbosity: 'Normal', level: 'info' });
    expect(verbosityChange(undefined, config('TraceAll'), 'info')).toEqual({
      verbosity: 'TraceAll',
      level: 'trace',
    });
  });

  it('never makes `tessera start` (warn by default) print info lines for a config left at Normal', () => {
    expect(verbosityChange(undefined, config(), 'warn')).toEqual({ verbosity: 'Normal', level: 'warn' });
    expect(verbosityChange(undefined, config('Normal'), 'warn')?.level).toBe('warn');
  });

  it('makes the process more verbose for Debug and Trace, never quieter than asked on the command line', () => {
    expect(verbosityChange(undefined, config('Debug'), 'warn')?.level).toBe('debug');
    expect(verbosityChange(undefined, config('Debug'), 'trace')?.level).toBe('trace');
    expect(verbosityChange(undefined, config('Trace'), 'silent')?.level).toBe('trace');
  });

  it('changes nothing while the verbosity stays the same', () => {
    expect(verbosityChange('Debug', config('Debug'), 'info')).toBeUndefined();
    expect(verbosityChange('Normal', config(), 'info')).toBeUndefined();
  });

  it('follows a change, and back to the start level', () => {
    expect(verbosityChange('Normal', config('Debug'), 'warn')).toEqual({
      verbosity: 'Debug',
      level: 'debug',
    });
    expect(verbosityChange('Debug', config('Normal'), 'warn')).toEqual({
      verbosity: 'Normal',
      level: 'warn',
    });
  });
});
