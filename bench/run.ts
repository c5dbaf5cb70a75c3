// `npm run bench -- SUITE`: runs bench/SUITE.ts, prints its metrics against their goals and writes
// bench/results/SUITE.json. Exits 1 when a goal is missed, so a regression is visible.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goalMet, type BenchSuite } from './types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const suites = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'types.ts'].includes(f) && !f.endsWith('.test.ts'))
  .map((f) => f.slice(0, -3));

const suite = process.argv[2];
if (!suite || !suites.includes(suite)) {
  process.stderr.write(`usage: npm run bench -- SUITE   (suites: ${suites.join(', ') || 'none yet'})\n`);
  process.exit(2);
}

const mod = (await import(`./${suite}.ts`)) as { run?: BenchSuite };
if (typeof mod.run !== 'function') throw new Error(`bench/${suite}.ts does not export run()`);
const result = await mod.run();
const report = {
  suite,
  date: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  machine: `${os.cpus().length} cores, Node ${process.version}`,
  metrics: result.metrics,
};
mkdirSync(path.join(here, 'results'), { recursive: true });
const file = path.join(here, 'results', `${suite}.json`);
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
