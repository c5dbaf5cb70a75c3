// `npx tsx bench/tools/operator-memory.ts [ENTRY...]`: what the idle pod placement operator's memory is made of.
// Starts an API-server-only local cluster, then for each ENTRY in turn (default dist/cli/main.js; e.g. a second
// build to compare two versions under the same load) runs `tessera podplacement operator` with the V8 limits of
// deploy/podplacement (as bench/podplacement.ts does), waits until it serves and has settled, and prints its RSS
// (anonymous and file-backed), V8 heap spaces, and a heap snapshot's self sizes by node type and by constructor.
// The RSS of 10,000 gated pods in flight is this idle figure plus a fraction of a MiB (bench/podplacement.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevCluster } from '../../src/devcluster/cluster.js';
import { freePort } from '../../src/devcluster/processes.js';
import { KubeClient } from '../../src/runtime/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SETTLE_MS = 15_000;

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

function procStatus(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+) kB$/.exec(line);
    if (m?.[1] && m[2]) out[m[1]] = Number(m[2]) * 1024;
  }
  return out;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`operator-memory: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Self sizes of a heap snapshot by node type and by the 25 biggest constructor (or string) names. */
function summarize(file: string): string {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const bigStrings: { size: number; text: string }[] = [];
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt] ?? 0] ?? '?';
    const size = snap.nodes[i + sizeAt] ?? 0;
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    if (type === 'string' && size > 64 * 1024)
      bigStrings.push({ size, text: (snap.strings[snap.nodes[i + nameAt] ?? 0] ?? '').slice(0, 100) });
    const name =
      type === 'string' || type === 'concatenated string'
        ? '(strings)'
        : `${type}: ${(snap.strings[snap.nodes[i + nameAt] ?? 0] ?? '').slice(0, 60)}`;
    byName.set(name, (byName.get(name) ?? 0) + size);
  }
  const table = (m: Map<string, number>, n: number): string =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `  ${mib(v).padStart(6)} MiB  ${k}`)
      .join('\n');
  // Mostly module source texts, which V8 keeps for lazy compilation: their first characters say which module.
  const strings = bigStrings
    .sort((a, b) => b.size - a.size)
    .slice(0, 25)
    .map((x) => `  ${mib(x.size).padStart(6)} MiB  ${JSON.stringify(x.text)}`)
    .join('\n');
  const bigTotal = bigStrings.reduce((n, x) => n + x.size, 0);
  return (
    `heap snapshot: ${mib(total)} MiB of live objects\nby node type:\n${table(byType, 12)}\nby name:\n${table(byName, 25)}\n` +
    `strings over 64 KiB: ${bigStrings.length}, ${mib(bigTotal)} MiB; the biggest:\n${strings}`
  );
}

/** The npm packages whose files the process loaded (their URLs are strings of the snapshot), by file count. */
function loadedPackages(file: string): string {
  const text = readFileSync(file, 'utf8');
  const files = new Set(text.match(/file:\/\/[^"\s]*?\/node_modules\/[^"\s]+?\.[cm]?js\b/g) ?? []);
  const counts = new Map<string, number>();
  for (const f of files) {
    const m = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f);
    if (m?.[1]) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} (${n})`)
    .join(', ');
}

async function measure(entry: string, kubeconfigPath: string, client: KubeClient): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-opmem-'));
  const probePort = await freePort();
  const webhookPort = await freePort();
  const opNs = 'tessera-podplacement';
  const child = spawn(
    process.execPath,
    [
      '--max-semi-space-size=4',
      '--max-old-space-size=160',
      '--heapsnapshot-signal=SIGUSR2',
      `--diagnostic-dir=${dir}`,
      entry,
      'podplacement',
      'operator',
      ...['--kubeconfig', kubeconfigPath, '--namespace', opNs, '--webhook-host', '127.0.0.1'],
      ...['--webhook-port', String(webhookPort), '--webhook-url', `https://127.0.0.1:${webhookPort}`],
      ...['--probe-port', String(probePort), '--no-leader-elect', '--install-crds'],
      ...['--cert-dir', path.join(dir, 'certs'), '--global-pull-secret-namespace', opNs],
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, TESSERA_LOG_LEVEL: 'warn' } },
  );
  try {
    const pid = child.pid ?? 0;
    await until('readiness', async () => (await fetch(`http://127.0.0.1:${probePort}/readyz`)).ok);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const status = procStatus(pid);
    const metrics = await (await fetch(`http://127.0.0.1:${probePort}/metrics`)).text();
    const spaces = [...metrics.matchAll(/^nodejs_heap_space_size_used_bytes\{space="(\w+)"\} (\S+)$/gm)]
      .map((m) => `${m[1]} ${mib(Number(m[2]))}`)
      .join(', ');
    const heapUsed = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? 'NaN');
    const heapTotal = Number(/^nodejs_heap_size_total_bytes (\S+)$/m.exec(metrics)?.[1] ?? 'NaN');
    process.stdout.write(
      `\n== ${path.relative(root, entry)}\nRSS ${mib(status.VmRSS ?? 0)} MiB (anonymous ${mib(status.RssAnon ?? 0)}, ` +
        `files ${mib(status.RssFile ?? 0)}); V8 heap used ${mib(heapUsed)} of ${mib(heapTotal)} MiB\n` +
        `heap spaces used (MiB): ${spaces}\n`,
    );
    child.kill('SIGUSR2');
    await until('heap snapshot', async () => {
      const f = readdirSync(dir).find((n) => n.endsWith('.heapsnapshot'));
      // Written in one go; a second read of the same size means it is complete.
      if (!f) return false;
      const size = (): number => readFileSync(path.join(dir, f)).length;
      const first = size();
      await new Promise((r) => setTimeout(r, 1000));
      return first > 0 && size() === first;
    });
    const snapshot = readdirSync(dir).find((n) => n.endsWith('.heapsnapshot')) ?? '';
    process.stdout.write(summarize(path.join(dir, snapshot)) + '\n');
    process.stdout.write(`packages with modules loaded: ${loadedPackages(path.join(dir, snapshot))}\n`);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    // OPERATOR_MEMORY_KEEP=1 keeps the heap snapshot (e.g. to open it in Chrome's DevTools).
    if (process.env.OPERATOR_MEMORY_KEEP === '1') process.stdout.write(`heap snapshot kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
    // The next entry installs the same webhook configuration; the first one's must not call a stopped server.
    await client
      .request({
        method: 'DELETE',
        path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/pod-placement-mutating-webhook-configuration',
      })
      .catch(() => undefined);
  }
}

const entries = process.argv.slice(2);
const cluster = await startDevCluster({
  name: `opmem-${process.pid}`,
  nodes: 'none',
  scheduler: false,
  kwok: false,
  controllerManager: false,
});
const client = new KubeClient(await cluster.kubeConfig(), { userAgent: 'tessera-operator-memory' });
try {
  await client.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { metadata: { name: 'tessera-podplacement' } },
  });
  for (const entry of entries.length > 0 ? entries : [path.join(root, 'dist', 'cli', 'main.js')])
    await measure(path.resolve(entry), cluster.kubeconfigPath, client);
} finally {
  await client.close();
  await cluster.stop({ wipe: true });
}
