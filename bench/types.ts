// The shape every benchmark suite returns; bench/run.ts adds suite, date and machine and writes
// bench/results/<suite>.json in the format of the team's bench-results spec.
export interface BenchGoal {
  readonly op: '<=' | '>=' | '==';
  readonly value: number;
}

export interface BenchMetric {
  readonly name: string;
  /** What this run measured; never copied from an earlier run. */
  readonly value: number;
  readonly unit: string;
  readonly goal?: BenchGoal;
  /** What the value is compared with, when it is a ratio or a difference (measured in the same run). */
  readonly baseline?: string;
}

export interface BenchResult {
  readonly metrics: readonly BenchMetric[];
  /**
   * Only some scenarios of the suite ran: bench/run.ts keeps the other metrics already in the results file
   * (replacing those measured now) instead of overwriting it.
   */
  readonly partial?: boolean;
}

/** `args`: what follows the suite name on the command line (e.g. scenario names). */
export type BenchSuite = (args: readonly string[]) => Promise<BenchResult>;

export function goalMet(metric: BenchMetric): boolean | undefined {
  const goal = metric.goal;
  if (!goal) return undefined;
  switch (goal.op) {
    case '<=':
      return metric.value <= goal.value;
    case '>=':
      return metric.value >= goal.value;
    case '==':
      return metric.value === goal.value;
  }
}
