// The `tessera` entry point as a user runs it (a child process), and which modules each short command loads: a
// command that never talks to a cluster must not pay for the Kubernetes client (0.7-0.9 s to import here).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/fixtures.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let tracer: string;

beforeAll(() => {
  // A module hook that names every module the process loads, on stderr.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-cli-trace-'));
  writeFileSync(
    path.join(dir, 'hooks.mjs'),
    'export async function load(url, context, next) { process.stderr.write(`LOADED ${url}\\n`); return next(url, context); }\n',
  );
  tracer = path.join(dir, 'trace.mjs');
  writeFileSync(
    tracer,
    "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
  );
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  loaded: string[];
}

function tessera(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', tracer, path.join(projectRoot, 'src/cli/main.ts'), ...args],
      // NODE_DEBUG=module names the CommonJS modules require() loads, which the ESM hook does not see.
      { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_DEBUG: 'module' } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stderr.split('\n');
      const traced = (l: string): boolean => l.startsWith('LOADED ') || /^MODULE \d+: /.test(l);
      resolve({
        code,
        stdout,
        stderr: lines.filter((l) => !traced(l)).join('\n'),
        loaded: lines.flatMap((l) => {
          if (l.startsWith('LOADED ')) return [l.slice('LOADED '.length)];
          const cjs = /^MODULE \d+: load "([^"]+)"/.exec(l);
          return cjs?.[1] ? [cjs[1]] : [];
        }),
      });
    });
  });
}

const loadedPackage = (run: Run, name: string): boolean =>
  run.loaded.some((url) => url.includes(`/node_modules/${name}/`));

describe('tessera', () => {
  it('prints its version, loading neither the Kubernetes client nor the logger', async () => {
    const run = await tessera('--version');
    const { version } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(version);
    expect(loadedPackage(run, '@kubernetes/client-node')).toBe(false);
    expect(loadedPackage(run, 'pino')).toBe(false);
    // Only the commander and the entry point: no area's command registrations.
    expect(run.loaded.filter((u) => u.includes('/src/') && !u.endsWith('/cli/main.ts'))).toEqual([]);
  }, 60_000);

  it('image inspect loads the registry client only (no Kubernetes client, logger, YAML or PSL)', async () => {
    // Nothing listens on port 1: the command fails after loading everything it needs.
    const run = await tessera('image', 'inspect', '127.0.0.1:1/app:v1');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot reach 127\.0\.0\.1:1/);
    expect(run.loaded.some((u) => u.endsWith('/src/registry/registry-inspector.ts'))).toBe(true);
    for (const heavy of ['@kubernetes/client-node', 'pino', 'yaml', 'tldts', '@sinclair/typebox'])
      expect(loadedPackage(run, heavy), heavy).toBe(false);
  }, 60_000);

  it('upgrade status renders a snapshot without the Kubernetes client, HTTP client, logger or metrics', async () => {
    const run = await tessera(
      'upgrade',
      'status',
      '--mock-clusterversion',
      fixturePath('oc-upgrade-status/4.16.0-compact-cv.yaml'),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('= Control Plane =');
    // The live cluster's modules (Kubernetes client, undici for alerts) and the UpdateStatus API's are not needed.
    for (const heavy of [
      '@kubernetes/client-node',
      '@sinclair/typebox',
      'undici',
      'pino',
      'prom-client',
      'yaml',
    ])
      expect(loadedPackage(run, heavy), heavy).toBe(false);
    expect(run.loaded.filter((u) => u.includes('/src/updatestatus/api/'))).toEqual([]);
  }, 60_000);

  it('refuses a bad flag value before the command runs, naming flag, value and reason (exit 1)', async () => {
    const run = await tessera('podplacement', 'operator', '--webhook-port', '70000');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "error: option '--webhook-port <port>' argument '70000' is invalid. Expected a port number from 1 to 65535, or 0 for any free port.\n",
    );
    // Refused by the flag's parser, before the operator (and the Kubernetes client) loads.
    expect(run.loaded.some((u) => u.endsWith('/src/podplacement/operator-command.ts'))).toBe(false);
    expect(loadedPackage(run, '@kubernetes/client-node')).toBe(false);
  }, 60_000);

  it('takes --log-format in every command and names a bad value', async () => {
    const run = await tessera('podplacement', 'explain', 'a/b', '--log-format', 'yaml');
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/--log-format .*yaml.*Allowed choices are auto, text, json/s);
  }, 60_000);
});
