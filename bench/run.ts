// `npm run bench -- SUITE [ARGS...]`: runs bench/SUITE.ts (ARGS, e.g. scenario names, go to its run()), prints
// its metrics against their goals and writes bench/results/SUITE.json; a partial run (some scenarios only) keeps
// the file's other metrics. Exits 1 when a goal is missed, so a regression is visible.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goalMet, type BenchMetric, type BenchSuite } from './types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const suites = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'types.ts'].includes(f) && !f.endsWith('.test.ts'))
  .map((f) => f.slice(0, -3));

const suite = process.argv[2];
if (!suite || !suites.includes(suite)) {
  process.stderr.write(
    `usage: npm run bench -- SUITE [ARGS...]   (suites: ${suites.join(', ') || 'none yet'})\n`,
  );
  process.exit(2);
}

const mod = (await import(`./${suite}.ts`)) as { run?: BenchSuite };
if (typeof mod.run !== 'function') throw new Error(`bench/${suite}.ts does not export run()`);
const result = await mod.run(process.argv.slice(3));
mkdirSync(path.join(here, 'results'), { recursive: true });
const file = path.join(here, 'results', `${suite}.json`);
const measured = new Set(result.metrics.map((m) => m.name));
// Kept metrics say when they were measured (the earlier file's date), since `date` is this run's.
const earlier =
  result.partial === true && existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as {
        date?: string;
        metrics?: (BenchMetric & { measured?: string })[];
      })
    : undefined;
const kept = (earlier?.metrics ?? [])
  .filter((m) => !measured.has(m.name))
  .map((m) => ({ ...m, measured: m.measured ?? earlier?.date }));
const report = {
  suite,
  date: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  machine: `${os.cpus().length} cores, Node ${process.version}`,
  metrics: [...kept, ...result.metrics],
};
writeFileSync(file, JSON.stringify(report, null, 2) + '\n');

let missed = 0;
for (const m of result.metrics) {
  const met = goalMet(m);
  if (met === false) missed++;
  const goal = m.goal ? `goal ${m.goal.op} ${m.goal.value}  ${met ? 'met' : 'MISSED'}` : '';
  process.stdout.write(
    `${m.name.padEnd(44)} ${String(round(m.value)).padStart(12)} ${m.unit.padEnd(10)} ${goal}\n`,
  );
}
process.stdout.write(`results written to ${path.relative(process.cwd(), file)}\n`);
if (missed > 0) process.exit(1);

function round(v: number): number {
  return Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 1000) / 1000;
}
