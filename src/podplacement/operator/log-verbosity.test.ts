import { describe, expect, it } from 'vitest';
import type { ClusterPodPlacementConfig } from '../api/schema.js';
import { verbosityChange } from './log-verbosity.js';

const config = (logVerbosity?: 'Normal' | 'Debug' | 'Trace' | 'TraceAll'): ClusterPodPlacementConfig =>
  ({
    metadata: { name: 'cluster' },
    spec: logVerbosity ? { logVerbosity } : {},
  }) as ClusterPodPlacementConfig;

describe('verbosityChange', () => {
  it('maps the first config to its log level, Normal (info) when unset', () => {
    expect(verbosityChange(undefined, config())).toEqual({ verbosity: 'Normal', level: 'info' });
    expect(verbosityChange(undefined, config('TraceAll'))).toEqual({ verbosity: 'TraceAll', level: 'trace' });
  });

  it('changes nothing while the verbosity stays the same', () => {
    expect(verbosityChange('Debug', config('Debug'))).toBeUndefined();
    expect(verbosityChange('Normal', config())).toBeUndefined();
  });

  it('follows a change', () => {
    expect(verbosityChange('Normal', config('Debug'))).toEqual({ verbosity: 'Debug', level: 'debug' });
  });
});
