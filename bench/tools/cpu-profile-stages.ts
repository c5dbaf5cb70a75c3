// `npx tsx bench/tools/cpu-profile-stages.ts PROFILE.cpuprofile [--from ISO --to ISO --exit ISO] [--pods N]`:
// where the pod placement operator's CPU goes, by stage, from a V8 CPU profile (`--cpu-prof`, e.g.
// PP_BENCH_OPERATOR_NODE_OPTIONS). With --from/--to (the bench's "paced run with the operator: start/end" log
// lines) and --exit (its "operator exited" line) only the samples of that window count: the profile ends when the
// operator exits, which pins its monotonic clock to the wall clock. With --pods the table is in ms per pod.
// Each sample goes to the innermost frame that names a stage (by file), so library code called by a stage counts
// for that stage; what no stage frame calls (undici's and TLS's callbacks, GC) gets a stage of its own.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Stages by the file a frame comes from (dist/ or src/ paths), tried in order; the first match names it. */
const STAGES: readonly (readonly [stage: string, test: (f: CallFrame) => boolean])[] = [
  ['events written', (f) => /runtime\/event-(recorder|correlator)\.[jt]s$/.test(f.url)],
  [
    'webhook review',
    (f) =>
      /runtime\/webhook\/|runtime\/connection-shedding|podplacement\/(gating-webhook|admission)\.[jt]s$/.test(
        f.url,
      ) || /node:_http_(server|incoming|outgoing)$/.test(f.url),
  ],
  [
    'informer events',
    (f) =>
      /runtime\/(cache\/|watch-decoder|list-decoder|light\.)|podplacement\/pod-projection\.[jt]s$/.test(
        f.url,
      ),
  ],
  [
    'reconcile (plan, registry cache, patch sent)',
    (f) =>
      /podplacement\/(pod-reconciler|placement-plan|pod-model|pull-secret|inspection-|operator\/pod-controller)|registry\/|runtime\/(controller|workqueue\/|resource-client)/.test(
        f.url,
      ),
  ],
  ['metrics and logging', (f) => /node_modules\/(prom-client|pino|sonic-boom)|runtime\/logging/.test(f.url)],
  ['API client (requests and answers: patch, events, leases)', (f) => /runtime\/client\.[jt]s$/.test(f.url)],
  ['HTTP client library (undici)', (f) => /node_modules\/undici\//.test(f.url)],
  [
    'TLS and sockets',
    (f) => /node:(_tls_|tls$|net$|_stream_|internal\/stream)|node:internal\/tls/.test(f.url),
  ],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['idle', (f) => f.functionName === '(idle)'],
];

export function stageTable(
  profile: CpuProfile,
  window?: { fromUs: number; toUs: number },
): { stage: string; ms: number }[] {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stageOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const own = node && STAGES.find(([, test]) => test(node.callFrame))?.[0];
    const up = parent.get(id);
    const stage = own ?? (up === undefined ? 'other' : resolve(up));
    stageOf.set(id, stage);
    return stage;
  };
  const totals = new Map<string, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const stage = resolve(profile.samples[i] ?? -1);
    totals.set(stage, (totals.get(stage) ?? 0) + delta / 1000);
  }
  return [...totals].map(([stage, ms]) => ({ stage, ms })).sort((a, b) => b.ms - a.ms);
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      exit: { type: 'string' },
      pods: { type: 'string' },
    },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write(
      'usage: cpu-profile-stages.ts PROFILE [--from ISO --to ISO --exit ISO] [--pods N]\n',
    );
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  let window: { fromUs: number; toUs: number } | undefined;
  if (values.from && values.to && values.exit) {
    const exitMs = Date.parse(values.exit);
    const toUs = (iso: string): number => profile.endTime - (exitMs - Date.parse(iso)) * 1000;
    window = { fromUs: toUs(values.from), toUs: toUs(values.to) };
  }
  const rows = stageTable(profile, window);
  const pods = Number(values.pods ?? 0);
  const busy = rows.filter((r) => r.stage !== 'idle').reduce((n, r) => n + r.ms, 0);
  process.stdout.write(`| stage | CPU ms${pods ? ' per pod' : ''} | share of busy time |\n|---|---|---|\n`);
  for (const r of rows) {
    if (r.stage === 'idle') continue;
    const v = pods ? r.ms / pods : r.ms;
    process.stdout.write(
      `| ${r.stage} | ${v.toFixed(pods ? 2 : 0)} | ${((100 * r.ms) / busy).toFixed(1)} % |\n`,
    );
  }
  process.stdout.write(`| all busy time | ${(pods ? busy / pods : busy).toFixed(2)} | 100 % |\n`);
}

main();
